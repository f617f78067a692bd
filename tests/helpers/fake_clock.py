"""A time.monotonic that tests move by hand: monkeypatch it into the module under test."""
from __future__ import annotations


class Clock:
    """Callable like time.monotonic; `now` is what it says (start: 1000.0)."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now
