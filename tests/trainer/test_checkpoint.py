"""Checkpoint files: atomic naming, keep-last-K, init_checkpoint resolution, RNG round trip."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from trainer.checkpoint import (CheckpointError, latest_checkpoint, list_checkpoints,
                                load_model_weights, load_trainer_state, read_meta,
                                resolve_model_file, rng_state, save_checkpoint, set_rng_state)
from trainer.distributed import DistEnv

ENV = DistEnv(rank=0, world_size=1, local_rank=0, device=torch.device("cpu"), backend=None)


def save(out, step, keep=2, model=None):
    model = model or torch.nn.Linear(2, 2)
    return save_checkpoint(out, step, ENV, meta={"phase": 1, "bert_config": {}},
                           model_state_fn=lambda tmp: model.state_dict(),
                           trainer_state={"step": step, "loader": {"samples_consumed": step}},
                           keep=keep)


def test_save_names_prunes_and_ignores_unfinished(tmp_path):
    for step in (1, 2, 3):
        save(tmp_path, step)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["ckpt_00000002", "ckpt_00000003"]
    # a checkpoint whose writer died: temporary name, never listed
    (tmp_path / "checkpoints" / ".tmp_ckpt_00000004").mkdir()
    assert latest_checkpoint(tmp_path).name == "ckpt_00000003"
    save(tmp_path, 4)  # the leftover temporary dir is replaced
    assert latest_checkpoint(tmp_path).name == "ckpt_00000004"
    assert not (tmp_path / "checkpoints" / ".tmp_ckpt_00000004").exists()
    meta = read_meta(latest_checkpoint(tmp_path))
    assert meta["step"] == 4 and meta["world_size"] == 1 and meta["format_version"] == 1
    state, rng = load_trainer_state(latest_checkpoint(tmp_path), ENV)
    assert state["loader"]["samples_consumed"] == 4 and "torch" in rng
    assert latest_checkpoint(tmp_path / "nothing") is None


def test_foreign_format_version_refused(tmp_path):
    ckpt = save(tmp_path, 1)
    (ckpt / "meta.json").write_text(json.dumps({"format_version": 99}))
    with pytest.raises(CheckpointError, match="format 99"):
        read_meta(ckpt)


def test_init_checkpoint_resolution_and_shape_check(tmp_path):
    model = torch.nn.Linear(3, 2)
    ckpt = save(tmp_path / "run", 5, model=model)
    for given in (tmp_path / "run", ckpt, ckpt / "model.pt"):
        assert resolve_model_file(given) == ckpt / "model.pt"
    other = torch.nn.Linear(3, 2)
    load_model_weights(other, tmp_path / "run")
    assert torch.equal(other.weight, model.weight)
    with pytest.raises(CheckpointError, match="does not fit the model|use the same --bert_config"):
        load_model_weights(torch.nn.Linear(4, 2), ckpt)
    with pytest.raises(CheckpointError, match="no model.pt there"):
        resolve_model_file(tmp_path / "empty")


def test_rng_round_trip():
    state = rng_state()
    a = (torch.rand(3), np.random.rand(), random.random())
    set_rng_state(state)
    b = (torch.rand(3), np.random.rand(), random.random())
    assert torch.equal(a[0], b[0]) and a[1:] == b[1:]
