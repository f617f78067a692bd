"""What a stage shows on the terminal: a progress bar on long work and one summary line.

Usage:
    for item in progress(items, desc="format", unit="file"): ...
    with progress(total=n_bytes, unit="B", unit_scale=True, desc="extract") as bar: bar.update(k)
    report("format", {"documents": 40, "output_bytes": 120_000})   # "format: documents 40; output 120.0 KB"

On a terminal the bar is tqdm's. When stderr is a file or a pipe (`make corpus > log 2>&1`, a
cluster job's log) a bar's carriage-return redraws would fill the log with fragments, so the
same calls print a plain line instead, at most every `--progress-every` seconds (default 30,
or $WIKI2BERT_PROGRESS_EVERY) and once more at the end of work that printed one:
    extract: 120.0 MB/353.0 MB (34%), 40 s, about 1 min 18 s left
"""
from __future__ import annotations

import logging
import os
import time

from tqdm import tqdm

from common import progress as shown
from common.progress import DEFAULT_PROGRESS_EVERY, PROGRESS_EVERY_ENV, duration, eta_text  # noqa: F401

log = logging.getLogger("pipeline")

_progress_every: float | None = None  # set by `pipeline --progress-every`


def set_progress_every(seconds: float | None) -> None:
    """Seconds between two plain progress lines (None: $WIKI2BERT_PROGRESS_EVERY, else 30)."""
    global _progress_every
    _progress_every = seconds


def progress_every() -> float:
    return shown.progress_every(_progress_every)


def _stderr_is_terminal() -> bool:
    return shown.stderr_is_terminal()


def progress(iterable=None, **kwargs):
    """A bar on stderr (tqdm's on a terminal, plain lines otherwise) that stays quiet under
    `pipeline -q` (logging above INFO) and with TQDM_DISABLE=1."""
    quiet = not log.isEnabledFor(logging.INFO)
    kwargs["disable"] = kwargs.get("disable", False) or quiet
    if not _stderr_is_terminal():
        return PlainProgress(iterable, **kwargs)
    kwargs.setdefault("leave", False)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(iterable, **kwargs)


class PlainProgress:
    """tqdm's interface as the stages use it (`update`, `n`, `with`, iteration, `close`) for a
    stderr that is no terminal: one plain line (no carriage return) at most every `every`
    seconds, and a last one at the end if any was printed. An error ends it silently."""

    def __init__(self, iterable=None, total=None, desc=None, unit="it", unit_scale=False,
                 initial=0, disable=False, every: float | None = None, **_tqdm_only):
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.iterable, self.total, self.desc = iterable, total, desc or "progress"
        self.unit, self.n = unit, initial   # unit "B": sizes in KB/MB/GB (tqdm's unit_scale)
        self.disable = disable or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true", "yes")
        self.every = progress_every() if every is None else every
        self.started = self.last = time.monotonic()
        self.shown: float | None = None  # the count the last line showed
        self.closed = False

    def _amount(self, n) -> str:
        if self.unit == "B":
            return human_bytes(n)
        return f"{int(n):,}"

    def line(self, now: float | None = None) -> str:
        elapsed = (time.monotonic() if now is None else now) - self.started
        unit = "" if self.unit == "B" else f" {self.unit}s"
        if self.total:
            text = (f"{self.desc}: {self._amount(self.n)}/{self._amount(self.total)}{unit} "
                    f"({100 * self.n / self.total:.0f}%), {duration(elapsed)}")
            left = eta_text(self.n, self.total, elapsed)
            text += f", {left}" if left else ""
            return text
        return f"{self.desc}: {self._amount(self.n)}{unit}, {duration(elapsed)}"

    def _show(self, now: float) -> None:
        log.info("%s", self.line(now))
        self.last, self.shown = now, self.n

    def update(self, n: float = 1) -> None:
        self.n += n
        if self.disable:
            return
        now = time.monotonic()
        if now - self.last >= self.every and self.n != self.shown:
            self._show(now)

    def close(self, finished: bool = True) -> None:
        if self.closed:
            return
        self.closed = True
        if not self.disable and finished and self.shown is not None and self.shown != self.n:
            self._show(time.monotonic())

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(finished=exc_type is None)

    def __iter__(self):
        finished = False
        try:
            for item in self.iterable:
                yield item
                self.update()
            finished = True
        finally:
            self.close(finished)


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.1f} GB"


def report(stage: str, summary: dict, skipped: bool = False) -> None:
    """The one-line summary a stage prints at its end."""
    parts = []
    for k, v in summary.items():
        if isinstance(v, bool):
            parts.append(f"{k} {'yes' if v else 'no'}")
        elif isinstance(v, dict):
            inner = ", ".join(f"{kk} {vv:,}" if isinstance(vv, int) else f"{kk} {vv}" for kk, vv in v.items())
            parts.append(f"{k}: {inner or 'none'}")
        elif k.endswith("bytes") and isinstance(v, (int, float)):
            parts.append(f"{k.replace('_bytes', '').replace('bytes', '') or 'size'} {human_bytes(v)}")
        elif isinstance(v, float):
            parts.append(f"{k} {v:.3g}")
        elif isinstance(v, int):
            parts.append(f"{k} {v:,}")
        else:
            parts.append(f"{k} {v}")
    prefix = f"{stage}: already done, nothing rewritten" if skipped else f"{stage}:"
    log.info("%s %s", prefix, "; ".join(parts) if not skipped else f"({'; '.join(parts)})")
