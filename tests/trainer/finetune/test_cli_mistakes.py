"""A flag mistake in `python -m trainer.finetune` is one `Error:` line with the flag or choice
meant (issue 60: a 30-line usage block came first), as the trainer's and the pipeline's; exit
status 2, as argparse's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BASE = ["--model", "m", "--train_file", "t", "--validation_file", "v", "--output_dir", "o"]


@pytest.mark.parametrize("mistake, said", [
    (["--task", "nerr"], "argument --task: invalid choice: 'nerr' (choose from 'ner', 'pos', 'classify', 'qa'); "
                         "did you mean --task ner?"),
    (["--task", "ner", "--baseline", "random"], "argument --baseline: invalid choice: 'random' (choose from "
                                                "'random-init'); did you mean --baseline random-init?"),
    (["--task", "ner", "--seeds", "1;2"], "argument --seeds: '1;2': give integers separated by commas, e.g. 1,2,3"),
    (["--task", "ner", "--epochz", "3"], "unrecognized arguments: --epochz 3; did you mean --epochs?"),
    (["--task", "ner", "--probe", "data/hu"], "give one of --probe, --train_file, not several"),
])
def test_a_flag_mistake_is_one_line_with_the_one_meant(mistake, said):
    res = subprocess.run([sys.executable, "-m", "trainer.finetune", *BASE, *mistake], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [f"Error: {said} (see python -m trainer.finetune --help)"], res.stderr
