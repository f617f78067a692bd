"""Fine-tuning progress, as the pipeline shows its own: tqdm's bar on a terminal; in a log file
or a pipe a plain line at most every PROGRESS_EVERY seconds (no carriage-return fragments),
with the steps done, the loss and the time left.

Usage:
    bar = progress(total=steps, desc="pretrained seed 1", unit="step")
    bar.update(1); bar.set_postfix(loss="0.123", refresh=False); bar.close()
    eta_text(done=2, total=6, seconds=120.0)   # "about 4 min 00 s left"
"""
from __future__ import annotations

import logging
import os
import sys
import time

log = logging.getLogger("trainer.finetune")

PROGRESS_EVERY_ENV = "WIKI2BERT_PROGRESS_EVERY"   # the pipeline's variable, the same meaning
DEFAULT_EVERY = 30.0


def _every() -> float:
    try:
        return float(os.environ.get(PROGRESS_EVERY_ENV, DEFAULT_EVERY))
    except ValueError:
        return DEFAULT_EVERY


def _terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def duration(seconds: float) -> str:
    """40 s, 12 min 05 s, 2 h 03 min."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def eta_text(done: int, total: int, seconds: float) -> str:
    """The time left for `total - done` more of what took `seconds` for `done`."""
    if done <= 0 or done >= total:
        return ""
    return f"about {duration(seconds * (total - done) / done)} left"


def progress(total: int, desc: str, unit: str = "step"):
    if _terminal():
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, leave=False, dynamic_ncols=True)
    return PlainProgress(total, desc, unit)


class PlainProgress:
    """The part of tqdm's interface the loop uses, as plain log lines:
    `pretrained seed 1: 120/400 steps (30%), loss 0.412, 40 s, about 1 min 33 s left`."""

    def __init__(self, total: int, desc: str, unit: str = "step", every: float | None = None):
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self.every = _every() if every is None else every
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
