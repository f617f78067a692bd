"""`make pretrain --long`'s phases (recipes/long_recipe.py): short rows first, the longest last with
the global θ raised, the same tokens a step in every phase on CPU, shares that sum to 1."""
from __future__ import annotations

import json

import pytest

from recipes.long_recipe import LONG, phase_list, write_phases
from trainer.config.phases import parse_phases


@pytest.mark.parametrize("device,lengths", [("cpu", [128, 512, 2048]), ("cuda", [128, 1024, 8192])])
def test_the_phases_end_long_with_the_global_theta_raised(device, lengths, tmp_path):
    phases = LONG[device]
    assert [p.max_seq for p in phases] == lengths
    assert [p.max_pred for p in phases] == [round(0.3125 * n) for n in lengths]   # 40 of 128: 30% and room
    assert sum(p.share for p in phases) == pytest.approx(1.0)
    folders = [tmp_path / f"d{n}" for n in lengths]
    listed = phase_list(phases, folders, batch_size=32)
    assert [p["global_rope_theta"] for p in listed] == [10000.0, 10000.0, 160000.0]
    assert {p["local_rope_theta"] for p in listed} == {10000.0}
    if device == "cpu":   # 32 x 128 = 8 x 512 = 2 x 2,048 tokens a step
        assert [p["train_batch_size"] * n for p, n in zip(listed, lengths)] == [4096] * 3
    path = write_phases(tmp_path / "phases.json", phases, folders, batch_size=1)
    read = parse_phases(str(path))   # what the trainer reads
    assert [p.train_batch_size for p in read] == [1, 1, 1] and read[-1].input_dir == str(folders[-1])
    assert json.loads(path.read_text())[0]["share"] == phases[0].share
