"""scripts/goldens.py run by path, as a developer runs it (a tool of the repository, not a package)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def goldens(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "goldens.py"), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def file_hash(path: Path, work: Path) -> str:
    """The goldens' hash of one file, WORK's path and what changes from run to run left out."""
    res = goldens("--hash", path, "--work", work)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()
