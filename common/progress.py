"""How long-running work shows its progress, for the pipeline's stages and the trainer's
fine-tuning alike: tqdm's bar when stderr is a terminal; when it is a file or a pipe (a log, a
cluster job), a plain line at most every `--progress-every` seconds (default 30, or
$WIKI2BERT_PROGRESS_EVERY), so that carriage-return redraws never fill a log with fragments.

Usage:
    stderr_is_terminal()                 # False for a log file, a pipe, a closed stderr
    progress_every()                     # the seconds between two plain lines
    duration(754)                        # "12 min 34 s"
    eta_text(done=2, total=6, seconds=120.0)   # "about 4 min 00 s left"
"""
from __future__ import annotations

import os
import sys

PROGRESS_EVERY_ENV = "WIKI2BERT_PROGRESS_EVERY"
DEFAULT_PROGRESS_EVERY = 30.0


def progress_every(given: float | None = None) -> float:
    """`given` (a flag's value), else $WIKI2BERT_PROGRESS_EVERY, else 30 seconds."""
    if given is not None:
        return given
    try:
        return float(os.environ.get(PROGRESS_EVERY_ENV, DEFAULT_PROGRESS_EVERY))
    except ValueError:
        return DEFAULT_PROGRESS_EVERY


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def duration(seconds: float) -> str:
    """40 s, 12 min 05 s, 2 h 03 min."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def eta_text(done: float, total: float, seconds: float) -> str:
    """The time left for `total - done` more of what took `seconds` for `done` ("" at the ends)."""
    if done <= 0 or done >= total:
        return ""
    return f"about {duration(seconds * (total - done) / done)} left"
