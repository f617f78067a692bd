"""A pickled object that runs a shell command when unpickled: what a hostile checkpoint file
could hold. Tests save it into checkpoint files and check that loading refuses it."""
from __future__ import annotations

import os
from pathlib import Path


class RunsCode:
    """Unpickling this calls os.system("touch MARKER"): the marker shows whether it ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)
