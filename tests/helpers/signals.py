"""Signals for tests that press Ctrl-C on a real process."""
from __future__ import annotations

import signal


def default_sigint() -> None:
    """Popen's preexec_fn: SIGINT as a terminal's shell leaves it. A test run started in the
    background (`pytest &`) inherits SIGINT ignored, and Python then never sees the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
