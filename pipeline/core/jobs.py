"""The executors' contract: a job is a function and its argument, or a `Ready` value that an
earlier run already computed; the number of workers a stage gets. Shared by the local executor
(pipeline/core/executor.py) and the Dask one (pipeline/core/dask_executor.py).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def default_workers(workers: int | None) -> int:
    """--workers, or every core this process may use."""
    if workers is None or workers <= 0:
        if hasattr(os, "sched_getaffinity"):
            return max(1, len(os.sched_getaffinity(0)))
        return max(1, os.cpu_count() or 1)
    return workers


@dataclass(frozen=True)
class Ready:
    """A job whose result is already known."""

    value: Any


Job = tuple[Callable[[Any], Any], Any] | Ready
