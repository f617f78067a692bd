"""Fine-tuning progress, as the pipeline shows its own (the rule is common/progress.py's): tqdm's
bar on a terminal; in a log file or a pipe a plain line at most every $WIKI2BERT_PROGRESS_EVERY
seconds (no carriage-return fragments), with the steps done, the loss and the time left.

Usage:
    bar = progress(total=steps, desc="pretrained seed 1", unit="step")
    bar.update(1); bar.set_postfix(loss="0.123", refresh=False); bar.close()
    eta_text(done=2, total=6, seconds=120.0)   # "about 4 min 00 s left"
"""
from __future__ import annotations

import logging
import os
import time

from tqdm.auto import tqdm

from common.progress import duration, eta_text, progress_every, stderr_is_terminal

log = logging.getLogger("trainer.finetune")


def progress(total: int, desc: str, unit: str = "step"):
    if stderr_is_terminal():
        return tqdm(total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)
    return PlainProgress(total, desc, unit)


class PlainProgress:
    """The part of tqdm's interface the loop uses, as plain log lines:
    `pretrained seed 1: 120/400 steps (30%), loss 0.412, 40 s, about 1 min 33 s left`."""

    def __init__(self, total: int, desc: str, unit: str = "step", every: float | None = None):
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self.every = progress_every(every)
        self.disable = os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true", "yes")
        self.started = self.last = time.monotonic()
        self.postfix = ""

    def set_postfix(self, refresh: bool = False, **values) -> None:
        self.postfix = ", ".join(f"{k} {v}" for k, v in values.items())

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        parts = [f"{self.desc}: {self.n:,}/{self.total:,} {self.unit}s ({100 * self.n / max(1, self.total):.0f}%)"]
        if self.postfix:
            parts.append(self.postfix)
        parts.append(duration(elapsed))
        left = eta_text(self.n, self.total, elapsed)
        if left:
            parts.append(left)
        return ", ".join(parts)

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if not self.disable and now - self.last >= self.every and self.n < self.total:
            self.last = now
            log.info("%s", self.line())

    def close(self) -> None:
        pass
