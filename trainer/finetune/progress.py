"""The fine-tuning progress bar: tqdm on a terminal, nothing in a log file (the summary lines
say what was done)."""
from __future__ import annotations

import sys


def progress(**kwargs):
    from tqdm.auto import tqdm

    return tqdm(disable=not sys.stderr.isatty(), leave=False, **kwargs)
