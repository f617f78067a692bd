"""What a stage shows on the terminal: a quiet tqdm bar on long work and one summary line.

Usage:
    for item in progress(items, desc="format", unit="file"): ...
    report("format", {"documents": 40, "output_bytes": 120_000})   # "format: documents 40; output 120.0 KB"
"""
from __future__ import annotations

import logging

log = logging.getLogger("pipeline")


def progress(iterable=None, **kwargs):
    """A tqdm bar on stderr that stays quiet under `pipeline -q` (logging above INFO)."""
    from tqdm import tqdm

    quiet = not log.isEnabledFor(logging.INFO)
    kwargs["disable"] = kwargs.get("disable", False) or quiet
    kwargs.setdefault("leave", False)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(iterable, **kwargs)


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
