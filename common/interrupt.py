"""The one line after Ctrl-C, said once: by the command the user typed, not by each command it
runs.

    say_interrupted("Interrupted: rerun the same command to go on ...")

A wrapper that runs our commands (recipes/demo.py, recipes/pretrain.py: `make demo`, `make
pretrain`) sets WIKI2BERT_QUIET_INTERRUPT=1 for them and says itself what to rerun, so the user
reads one line with one piece of advice, the wrapper's. The pipeline, the trainer and the
fine-tuning entry say theirs only when the variable is not set.
"""
from __future__ import annotations

import os
import sys

QUIET_ENV = "WIKI2BERT_QUIET_INTERRUPT"


def quiet() -> bool:
    """The caller says what to do after Ctrl-C (it set WIKI2BERT_QUIET_INTERRUPT=1)."""
    return os.environ.get(QUIET_ENV) == "1"


def say_interrupted(line: str) -> None:
    """`line` on stderr, unless a wrapper will say it."""
    if not quiet():
        print(line, file=sys.stderr, flush=True)
