"""Checkpoint files: atomic naming, keep-last-K, the one completeness rule, init_checkpoint
resolution, RNG round trip, safe loading (older RNG files load, files holding code are refused)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from tests.helpers.hostile_pickle import RunsCode
from trainer.checkpoint import (
    CheckpointError,
    checkpoint_step,
    is_complete,
    latest_checkpoint,
    list_checkpoints,
    read_meta,
    resolve_model_file,
)
from trainer.checkpoint.files import load_model_weights, rng_state, set_rng_state
from trainer.checkpoint.save import load_trainer_state, save_checkpoint
from trainer.runtime.distributed import DistEnv

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
    with pytest.raises(CheckpointError, match="does not fit the model|use the same --model_config"):
        load_model_weights(torch.nn.Linear(4, 2), ckpt)
    with pytest.raises(CheckpointError, match="no model.pt there"):
        resolve_model_file(tmp_path / "empty")


def test_rng_round_trip():
    state = rng_state()
    a = (torch.rand(3), np.random.rand(), random.random())
    set_rng_state(state)
    b = (torch.rand(3), np.random.rand(), random.random())
    assert torch.equal(a[0], b[0]) and a[1:] == b[1:]


def test_one_completeness_rule(tmp_path):
    ckpt = save(tmp_path, 7)
    assert is_complete(ckpt) and checkpoint_step(ckpt) == 7
    # written last before the rename: without either file a directory is not a checkpoint
    for name in ("model.pt", "meta.json"):
        part = tmp_path / "checkpoints" / f"ckpt_0000000{8 if name == 'model.pt' else 9}"
        part.mkdir()
        (part / name).write_bytes(b"")
        assert not is_complete(part)
    # a temporary directory holding both files has not been renamed yet
    tmp = tmp_path / "checkpoints" / ".tmp_ckpt_00000010"
    tmp.mkdir()
    (tmp / "model.pt").write_bytes(b"")
    (tmp / "meta.json").write_text("{}")
    assert not is_complete(tmp)
    assert list_checkpoints(tmp_path) == [ckpt]


def test_rng_file_holds_only_tensors_and_plain_data(tmp_path):
    ckpt = save(tmp_path, 1)
    rng = torch.load(ckpt / "rng_rank0.pt", weights_only=True)  # no allow-list needed
    assert isinstance(rng["numpy"]["keys"], torch.Tensor) and rng["numpy"]["name"] == "MT19937"
    torch.load(ckpt / "trainer_state.pt", weights_only=True)


def test_rng_file_of_the_older_format_still_loads(tmp_path):
    """Before, rng_rank{r}.pt held numpy's state tuple with its numpy array, pickled as is."""
    ckpt = save(tmp_path, 1)
    np.random.seed(11)
    random.seed(11)
    torch.save({"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                "python": random.getstate()}, ckpt / "rng_rank0.pt")
    expected = (np.random.rand(), random.random(), torch.rand(2))
    np.random.seed(0)
    random.seed(0)
    _, rng = load_trainer_state(ckpt, ENV)
    set_rng_state(rng)
    got = (np.random.rand(), random.random(), torch.rand(2))
    assert got[:2] == expected[:2] and torch.equal(got[2], expected[2])


@pytest.mark.parametrize("name", ["trainer_state.pt", "rng_rank0.pt", "model.pt"])
def test_a_file_holding_code_is_refused_not_run(tmp_path, name):
    ckpt = save(tmp_path / "run", 1)
    marker = tmp_path / "code_ran"
    torch.save({"step": 1, "payload": RunsCode(marker)}, ckpt / name)
    with pytest.raises(CheckpointError) as err:
        if name == "model.pt":
            load_model_weights(torch.nn.Linear(2, 2), ckpt)
        else:
            load_trainer_state(ckpt, ENV)
    msg = str(err.value)
    assert "\n" not in msg and "refused" in msg and "system" in msg, msg
    assert not marker.exists()


def test_a_damaged_file_is_one_line(tmp_path):
    ckpt = save(tmp_path, 1)
    (ckpt / "trainer_state.pt").write_bytes(b"truncated")
    with pytest.raises(CheckpointError, match="cannot read .*trainer_state.pt") as err:
        load_trainer_state(ckpt, ENV)
    assert "\n" not in str(err.value)


@pytest.mark.usefixtures("one_thread")
def test_the_size_estimate_is_a_little_above_the_written_checkpoint(tiny_shards, tiny_bert_config,
                                                                     tmp_path):
    """trainer/checkpoint/space.py's size, before the first step (the optimizer's moments not yet
    made) and after, against the checkpoint's files: never below, at most 15% above."""
    from tests.helpers.trainer_cli import base_args
    from trainer.config import load_config
    from trainer.loop import Trainer

    trainer = Trainer(load_config(base_args(tiny_shards, tiny_bert_config, tmp_path / "run",
                                           max_steps=2, checkpoint_every=2)))
    try:
        before = trainer.checkpoint_bytes()
        trainer.train()
        after = trainer.checkpoint_bytes()
    finally:
        trainer.env.shutdown()
    written = sum(f.stat().st_size for f in latest_checkpoint(tmp_path / "run").iterdir())
    assert written <= before <= 1.15 * written and written <= after <= 1.15 * written, (
        before, after, written)
