"""The wrappers' command runner (recipes/commands.py): after Ctrl-C the command stops quietly
and the wrapper alone says what to rerun; a failure names its step and exit status."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recipes.commands import StepFailed, run_command

ROOT = Path(__file__).resolve().parents[2]

# A wrapper running one child that, like the pipeline and the trainer, says its own line after
# Ctrl-C unless told not to (common/interrupt.py).
WRAPPER = """
import sys
from recipes.commands import run_command
child = ("import time\\nfrom common.interrupt import say_interrupted\\ntry:\\n    print('child up', flush=True)\\n"
         "    time.sleep(60)\\nexcept KeyboardInterrupt:\\n    say_interrupted('child: rerun with --resume')\\n"
         "    raise SystemExit(130)")
try:
    run_command([sys.executable, "-c", child], "training")
except KeyboardInterrupt:
    print("Interrupted: rerun `make pretrain LANG=hu` to go on", file=sys.stderr)
    sys.exit(130)
"""


def test_ctrl_c_is_one_line_with_one_advice(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", WRAPPER], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    seen = []
    for line in proc.stdout:   # after the `$ python -c ...` lines
        seen.append(line)
        if "child up" in line:
            break
    else:   # the output ended: the wrapper or its child died before the child came up
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"the child never came up (exit status {proc.returncode});\n"
                    f"stdout: {''.join(seen)!r}\nstderr: {err!r}")
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)   # what Ctrl-C does: the whole foreground group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["Interrupted: rerun `make pretrain LANG=hu` to go on"]


def test_a_failed_command_names_its_step_and_status():
    with pytest.raises(StepFailed) as failed:
        run_command([sys.executable, "-c", "raise SystemExit(3)"], "pipeline vocab")
    assert (failed.value.step, failed.value.status) == ("pipeline vocab", 3)
    assert str(failed.value) == "pipeline vocab stopped (exit status 3): see the messages above"
