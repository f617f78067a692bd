"""A small real disk for the fault tests: a tmpfs mounted for one test (root only, as in CI),
filled by another writer (the kernel's ENOSPC) or remounted read-only (EROFS)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


class Tmpfs:
    """A tmpfs of `size` at `path` (created); the test skips, saying why, where it cannot mount."""

    def __init__(self, path: Path, size: str):
        self.path = path
        path.mkdir()
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("a full or read-only disk needs root to mount a tmpfs (CI runs as root)")
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip()}): no full or read-only disk")

    def remount(self, options: str) -> None:
        """`remount("size=8m")` grows it, `remount("ro")` / `remount("rw")` flips it."""
        subprocess.run(["mount", "-o", f"remount,{options}", str(self.path)], check=True,
                       capture_output=True)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], check=False, capture_output=True)
