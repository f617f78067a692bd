"""The error the trainer's set-up and loop raise for a user's mistake.

`run_pretraining.main()` prints it as one `Error: ...` line and exits with status 1; the
modules' own errors (ConfigError, DataError, CheckpointError, VocabError) are turned into it.
"""
from __future__ import annotations


class TrainError(ValueError):
    """A user-facing problem found while setting up or running training."""
