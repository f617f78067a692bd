"""The error a stage's Python API raises for a user's mistake; the CLI prints it as one line."""
from __future__ import annotations


class StageError(ValueError):
    """A user-facing problem: the message says what is wrong and what to do (one line)."""
