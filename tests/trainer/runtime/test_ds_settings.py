"""The DeepSpeed rules (trainer/runtime/ds_settings.py): the config's batch and precision against our
flags, the global batch reconciled, clear errors for settings DeepSpeed cannot honour here,
the LAMB-under-ZeRO warning. No DeepSpeed start-up: cheap."""
from __future__ import annotations

import json
import os
import time

import pytest

from tests.helpers.trainer_cli import ROOT, ZERO1
from tests.helpers.trainer_cli import deepspeed_args as argv
from trainer.config import parse_args
from trainer.errors import TrainError
from trainer.run_pretraining import main
from trainer.runtime import ds_settings
from trainer.runtime.ds_settings import (
    STALE_BUILD_LOCK_S,
    clear_stale_shm_build_lock,
    deepspeed_settings,
    lamb_zero_warning,
    lock_holder_alive,
)


def one_error(capsys, args, match):
    assert main(args) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and match in err[0], err


def test_conflicting_and_unsupported_settings(tiny_shards, tiny_bert_config, tmp_path, capsys):
    one_error(capsys, argv(tiny_shards, tiny_bert_config, tmp_path / "a", precision="fp32"),
              "--precision fp32 conflicts with")
    cfg = json.loads(ZERO1.read_text())
    cfg["train_micro_batch_size_per_gpu"] = 16
    (tmp_path / "mb.json").write_text(json.dumps(cfg))
    one_error(capsys, argv(tiny_shards, tiny_bert_config, tmp_path / "b",
                           deepspeed_config=tmp_path / "mb.json"),
              "--train_batch_size 4 conflicts with train_micro_batch_size_per_gpu 16")
    cfg = dict(json.loads(ZERO1.read_text()), fp16={"enabled": True})
    del cfg["bf16"]
    (tmp_path / "fp16.json").write_text(json.dumps(cfg))
    one_error(capsys, argv(tiny_shards, tiny_bert_config, tmp_path / "c",
                           deepspeed_config=tmp_path / "fp16.json"), "CUDA only")
    cfg = dict(json.loads(ZERO1.read_text()), optimizer={"type": "Lamb", "params": {"lr": 1e-3}})
    (tmp_path / "lamb.json").write_text(json.dumps(cfg))
    one_error(capsys, argv(tiny_shards, tiny_bert_config, tmp_path / "d",
                           deepspeed_config=tmp_path / "lamb.json"), "CUDA-only fused kernel")


def settings(tmp_path, ds: dict, argv_extra=(), world_size=1):
    """deepspeed_settings on a DeepSpeed config."""
    (tmp_path / "ds.json").write_text(json.dumps(ds))
    args = parse_args(["--bert_config", "b.json", "--input_dir", "d", "--output_dir", "o",
                       "--deepspeed", "--deepspeed_config", str(tmp_path / "ds.json"), *argv_extra])
    ds = deepspeed_settings(args, "fp32", "cpu", world_size=world_size)
    cfg = ds.config
    key = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    assert (ds.train_batch_size, ds.gradient_accumulation_steps) == (cfg[key[1]], cfg[key[2]])
    # DeepSpeed's own assertion: train_batch_size = micro x accumulation x world size
    assert cfg.get(key[0], cfg[key[1]] * cfg[key[2]] * world_size) == cfg[key[1]] * cfg[key[2]] * world_size
    return tuple(cfg[k] for k in key[1:])


def test_global_train_batch_size_is_reconciled_with_the_flags(tmp_path):
    # only the global batch: DeepSpeed's rule (accumulation 1, micro = global / ranks)
    assert settings(tmp_path, {"train_batch_size": 64}, world_size=2) == (32, 1)
    # with our micro-batch flag: accumulation derived
    assert settings(tmp_path, {"train_batch_size": 64}, ["--train_batch_size", "8"], 2) == (8, 4)
    # with our accumulation flag: micro-batch derived
    assert settings(tmp_path, {"train_batch_size": 64},
                    ["--gradient_accumulation_steps", "4"], 2) == (8, 4)
    # with the micro-batch in the DeepSpeed config
    assert settings(tmp_path, {"train_batch_size": 48, "train_micro_batch_size_per_gpu": 8},
                    world_size=3) == (8, 2)
    # no global batch: the flags (per rank, per micro-step) go in unchanged
    assert settings(tmp_path, {}, ["--train_batch_size", "8", "--gradient_accumulation_steps",
                                   "3"], 4) == (8, 3)


def test_global_train_batch_size_that_does_not_divide_is_one_line(tmp_path, capsys):
    with pytest.raises(TrainError, match="not a multiple of micro-batch 6 x 2 rank"):
        settings(tmp_path, {"train_batch_size": 64}, ["--train_batch_size", "6"], 2)
    with pytest.raises(TrainError, match=r"micro-batch 8 x accumulation 2 x 2 = 32"):
        settings(tmp_path, {"train_batch_size": 64}, ["--train_batch_size", "8",
                                                      "--gradient_accumulation_steps", "2"], 2)
    with pytest.raises(TrainError, match="train_batch_size must be a positive integer, got 'auto'"):
        settings(tmp_path, {"train_batch_size": "auto"})
    cfg = dict(json.loads(ZERO1.read_text()), train_batch_size=7)
    (tmp_path / "g.json").write_text(json.dumps(cfg))
    one_error(capsys, ["--bert_config", "b.json", "--input_dir", "d", "--output_dir",
                       str(tmp_path / "o"), "--deepspeed", "--deepspeed_config",
                       str(tmp_path / "g.json"), "--train_batch_size", "2"], "not a multiple of")


def test_lamb_under_zero_is_flagged():
    zero1 = json.loads(ZERO1.read_text())
    assert "per partition, not per tensor" in lamb_zero_warning(zero1, "lamb")
    zero2 = json.loads((ROOT / "trainer/configs/ds_zero2.json").read_text())
    assert "ZeRO stage 2" in lamb_zero_warning(zero2, "lamb")
    assert lamb_zero_warning(zero1, "adamw") is None
    assert lamb_zero_warning(dict(zero1, zero_optimization={"stage": 0}), "lamb") is None
    assert lamb_zero_warning({"bf16": {"enabled": True}}, "lamb") is None


def test_a_lock_left_by_a_killed_shm_op_build_is_removed_and_a_held_one_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    assert clear_stale_shm_build_lock() is None          # no lock: nothing to say
    lock = tmp_path.resolve() / "deepspeed_shm_comm" / "lock"
    fd = os.open(lock, os.O_CREAT | os.O_EXCL)            # a build under way holds it, as FileBaton does
    try:
        assert lock_holder_alive(lock) is True
        assert clear_stale_shm_build_lock() is None and lock.exists()
    finally:
        os.close(fd)
    assert lock_holder_alive(lock) is False                # its builder was killed
    line = clear_stale_shm_build_lock()
    assert not lock.exists() and "interrupted build" in line and str(lock) in line


def test_where_proc_cannot_tell_a_lock_is_stale_by_its_age(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    monkeypatch.setattr(ds_settings, "lock_holder_alive", lambda lock: None)
    lock = tmp_path / "deepspeed_shm_comm" / "lock"
    lock.parent.mkdir()
    lock.touch()
    assert clear_stale_shm_build_lock() is None and lock.exists()
    old = time.time() - STALE_BUILD_LOCK_S - 60
    os.utime(lock, (old, old))
    assert "interrupted build" in clear_stale_shm_build_lock() and not lock.exists()
