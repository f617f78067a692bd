"""What `make demo` and `make pretrain` (recipes/demo.py, recipes/pretrain.py) share: running one of the
product's commands with its output streaming to ours, and what a failed or interrupted one
raises.

    run_command([sys.executable, "-m", "pipeline", ...], "pipeline run")   # prints `$ pipeline ...`
    # StepFailed("pipeline run", 1) when it fails, KeyboardInterrupt after Ctrl-C

While a command runs, Ctrl-C is its to handle: it stops cleanly (a checkpoint, a task marker)
without saying anything (common/interrupt.py's WIKI2BERT_QUIET_INTERRUPT), and only then does
the wrapper see the interrupt, so that it alone says what to rerun: one line, one advice.

    font_cache_env(data_dir)   # {"MPLCONFIGDIR": ...} where matplotlib's own font cache cannot persist
"""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from common.interrupt import QUIET_ENV

ROOT = Path(__file__).resolve().parents[1]  # the repo root: commands run there


class DemoError(RuntimeError):
    """A step failed; the message names the step and what to look at."""


class StepFailed(DemoError):
    """A command ended with a non-zero exit status; its own messages said why."""

    def __init__(self, step: str, status: int):
        self.step, self.status = step, status
        super().__init__(f"{step} stopped (exit status {status}): see the messages above")


def say(msg: str = "") -> None:
    print(msg, flush=True)


def shown(cmd: list) -> str:
    text = " ".join(shlex.quote(str(c)) for c in cmd)
    return text.replace(sys.executable, "python")


def torchrun_prefix(nproc: int) -> list:
    # --standalone: a private rendezvous on a free port; trainer.launch: torchrun, quiet on Ctrl-C
    return [sys.executable, "-m", "trainer.launch", "--standalone", f"--nproc_per_node={nproc}"]


@contextlib.contextmanager
def _interrupt_after():
    """Ctrl-C noted, not raised, until the block ends (the child gets it and stops itself)."""
    hit: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield hit
        return
    before = signal.signal(signal.SIGINT, lambda signum, frame: hit.append(signum))
    try:
        yield hit
    finally:
        signal.signal(signal.SIGINT, before)


def run_command(cmd: list, step: str, env: dict | None = None) -> None:
    """Run a command in the repo root, its output streaming to ours; StepFailed names the step."""
    say(f"$ {shown(cmd)}")
    full_env = {**os.environ, "PYTHONUTF8": "1", QUIET_ENV: "1", **(env or {})}
    with _interrupt_after() as hit:
        status = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, env=full_env).wait()
    if hit or status in (130, -signal.SIGINT):   # the command was interrupted (SIGINT)
        raise KeyboardInterrupt
    if status != 0:
        raise StepFailed(step, status)


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


@contextlib.contextmanager
def timed(step: str):
    """A closing step of `make pretrain` that says its seconds when it is done ("   export: 4.2
    s"), so that the time after training is accounted for step by step."""
    t0 = time.perf_counter()
    yield
    say(f"   {step}: {time.perf_counter() - t0:.1f} s")


def font_cache_env(data_dir: Path) -> dict:
    """{"MPLCONFIGDIR": DATA_DIR/.matplotlib} where matplotlib's own cache folder (MPLCONFIGDIR,
    else XDG_CACHE_HOME/matplotlib or ~/.cache/matplotlib) cannot be written: matplotlib then
    scans the fonts into a temporary folder for every report; {} where its cache persists."""
    if os.environ.get("MPLCONFIGDIR"):
        return {}
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"
    where = next((p for p in (cache, *cache.parents) if p.exists()), None)
    if where is not None and os.access(where, os.W_OK):
        return {}
    return {"MPLCONFIGDIR": str((data_dir / ".matplotlib").resolve())}
