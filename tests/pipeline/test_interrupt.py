"""Ctrl-C in the middle of a stage whose tasks run in worker processes: one line that says how
to go on, exit status 130, no worker's traceback (issue 38: up to 63 lines before `Aborted!`);
the same command then finishes the work. A real SIGINT to the process group, as a terminal
sends it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from pipeline.cli import INTERRUPTED
from tests.helpers.multistream_dump import make_multistream, repeated_dump
from tests.helpers.signals import default_sigint


@pytest.mark.slow
def test_ctrl_c_during_a_pooled_stage_is_one_line_and_the_rerun_goes_on(sample_dump, tmp_path):
    big = repeated_dump(sample_dump, tmp_path / "big.xml.bz2", copies=60)
    dump, _ = make_multistream(big, tmp_path / "ms", pages_per_stream=20)
    cmd = [sys.executable, "-m", "pipeline", "--data-dir", str(tmp_path / "data"), "--lang", "hu",
           "--workers", "2", "extract", "--input", str(dump)]
    env = {**os.environ, "WIKI2BERT_PROGRESS_EVERY": "0", "PYTHONUTF8": "1"}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
                            preexec_fn=default_sigint)
    first = proc.stderr.readline()     # the first progress line: the workers are busy
    assert first.startswith("extract: "), first
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    err = first + proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "Aborted!" not in err
    assert err.strip().splitlines()[-1] == INTERRUPTED
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
