"""--deepspeed on CPU: a bf16 ZeRO-1 smoke run with exact resume, and clear errors for settings
DeepSpeed cannot honour here. The runs are module-scoped (DeepSpeed's start-up is the cost).

The uninterrupted run takes DeepSpeed's default path, which JIT-builds its C++ shm_comm op
(about 1-3.5 min once per machine, then cached in ~/.cache/torch_extensions): it is what a user
gets, and a build failure (compiler, headers, a torch/DeepSpeed mismatch) would otherwise show
only to users. That is the suite's one build; the other runs set WIKI2BERT_DS_SHM=0 (gloo)
and must give the same losses."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from trainer.run_pretraining import main

pytest.importorskip("deepspeed")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "trainer" / "run_pretraining.py"
ZERO1 = ROOT / "trainer" / "configs" / "ds_zero1.json"


def argv(shards, cfg, out, **kw):
    opts = {"bert_config": cfg, "input_dir": shards, "output_dir": out, "train_batch_size": 4,
            "max_steps": 4, "log_every": 1, "checkpoint_every": 2, "learning_rate": 1e-2,
            "seed": 5, "device": "cpu", "deepspeed_config": ZERO1, **kw}
    out = ["--deepspeed", "--no-tensorboard"]
    for k, v in opts.items():
        out += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    return out


def run(args, shm=False):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    env.pop("WIKI2BERT_DS_SHM", None)
    if not shm:
        env["WIKI2BERT_DS_SHM"] = "0"
    res = subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True,
                         text=True, timeout=480)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout + res.stderr


def losses(out):
    return [json.loads(x)["loss"] for x in (out / "train_log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def ds_runs(tiny_shards, tiny_bert_config, tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    output = run(argv(tiny_shards, tiny_bert_config, root / "straight"), shm=True)
    # DeepSpeed prints this when its shm_comm op is built (or loaded from the cache) and used
    assert "shm_comm" in output and "built successfully" in output, output[-3000:]
    run(argv(tiny_shards, tiny_bert_config, root / "parts", steps_this_run=2))
    run(argv(tiny_shards, tiny_bert_config, root / "parts", resume_from_checkpoint=True))
    return root / "straight", root / "parts"


@pytest.mark.slow
def test_deepspeed_bf16_trains_and_resumes_exactly(ds_runs):
    straight, parts = ds_runs
    a, b = losses(straight), losses(parts)
    assert len(a) == len(b) == 4 and all(map(torch.isfinite, torch.tensor(a)))
    assert max(abs(x - y) for x, y in zip(a, b)) <= 1e-5
    assert json.loads((straight / "hparams.json").read_text())["precision"] == "bf16"


@pytest.mark.slow
def test_deepspeed_checkpoint_layout(ds_runs, tiny_bert_config):
    ckpt = ds_runs[0] / "checkpoints" / "ckpt_00000004"
    assert (ckpt / "deepspeed").is_dir() and (ckpt / "rng_rank0.pt").is_file()
    sd = torch.load(ckpt / "model.pt", weights_only=True)
    from trainer.model import BertConfig, BertForPreTraining

    expected = BertForPreTraining(BertConfig.from_json_file(tiny_bert_config)).state_dict()
    assert set(sd) == set(expected)
    assert all(v.dtype == torch.float32 for v in sd.values() if v.is_floating_point())
    # fp32 master weights (not the bf16 working copy): not all representable in bf16
    w = sd["bert.encoder.layer.0.attention.self.query.weight"]
    assert not torch.equal(w, w.bfloat16().float())


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
    """deepspeed_settings on a DeepSpeed config (no DeepSpeed start-up: cheap)."""
    from trainer.config import parse_args
    from trainer.run_pretraining import deepspeed_settings

    (tmp_path / "ds.json").write_text(json.dumps(ds))
    args = parse_args(["--bert_config", "b.json", "--input_dir", "d", "--output_dir", "o",
                       "--deepspeed", "--deepspeed_config", str(tmp_path / "ds.json"), *argv_extra])
    cfg, _ = deepspeed_settings(args, "fp32", "cpu", world_size=world_size)
    key = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    assert (args.train_batch_size, args.gradient_accumulation_steps) == (cfg[key[1]], cfg[key[2]])
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
    from trainer.run_pretraining import TrainError

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
    from trainer.run_pretraining import lamb_zero_warning

    zero1 = json.loads(ZERO1.read_text())
    assert "per partition, not per tensor" in lamb_zero_warning(zero1, "lamb")
    zero2 = json.loads((ROOT / "trainer/configs/ds_zero2.json").read_text())
    assert "ZeRO stage 2" in lamb_zero_warning(zero2, "lamb")
    assert lamb_zero_warning(zero1, "adamw") is None
    assert lamb_zero_warning(dict(zero1, zero_optimization={"stage": 0}), "lamb") is None
    assert lamb_zero_warning({"bf16": {"enabled": True}}, "lamb") is None
