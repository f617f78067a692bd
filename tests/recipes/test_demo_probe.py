"""The demo's probe step: the command it runs and the verdict of its summary line."""
from __future__ import annotations

import json
from pathlib import Path

from recipes.demo_probe import probe_command, probe_summary


def write(path: Path, p: tuple, b: tuple) -> Path:
    path.write_text(json.dumps({
        "metric": "entity_f1", "evaluated_on": "test", "seeds": [1, 2, 3],
        "data": {"examples": {"train": 400, "validation": 13, "test": 15}},
        "pretrained": {"mean": p[0], "sd": p[1]}, "random_init": {"mean": b[0], "sd": b[1]}}))
    return path


def test_the_verdict_needs_a_gap_of_two_sd(tmp_path):
    f = tmp_path / "results.json"
    assert "(pretraining helped)" in probe_summary(write(f, (0.7, 0.01), (0.5, 0.02)))
    assert "(no clear difference)" in probe_summary(write(f, (0.7, 0.05), (0.65, 0.02)))
    assert "(pretraining hurt)" in probe_summary(write(f, (0.2, 0.02), (0.68, 0.07)))
    assert "on 15 test sentences, 3 seeds" in probe_summary(f)


def test_the_command_is_the_finetune_contract(tmp_path):
    cmd = [str(c) for c in probe_command(Path("hf"), Path("data/hu"), Path("out"))]
    assert cmd[1:3] == ["-m", "trainer.finetune"]
    for flag, value in (("--model", "hf"), ("--probe", "data/hu"), ("--seeds", "1,2,3"),
                        ("--baseline", "random-init")):
        assert cmd[cmd.index(flag) + 1] == value
