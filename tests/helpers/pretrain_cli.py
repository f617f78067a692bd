"""Running `make pretrain`'s command (python -m recipes.pretrain) from tests, as a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pretrain(*args) -> subprocess.CompletedProcess:
    """`python -m recipes.pretrain` with `args` (str() of each), from the repository root; its output
    captured as text, UTF-8 and no progress bars."""
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "recipes.pretrain", *map(str, args)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
