"""Fill-mask with an exported model: predictions only, without transformers' load report or
progress bars."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.trainer_run_dir import make_run_dir
from trainer.export import main as export_main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_fill_mask_prints_predictions_and_nothing_else(tmp_path):
    pytest.importorskip("transformers")
    make_run_dir(tmp_path / "run")
    assert export_main(["--checkpoint_dir", str(tmp_path / "run"), "--output", str(tmp_path / "hf")]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRANSFORMERS_", "HF_HUB_DISABLE"))}
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "fill_mask.py"), str(tmp_path / "hf"),
                          "Budapest [MASK] tükör."], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "Budapest [MASK] tükör."
    assert res.stdout.splitlines()[1].startswith("  [MASK] #1: ")
    assert res.stderr.strip() == ""          # no LOAD REPORT, no "Loading weights" bar
