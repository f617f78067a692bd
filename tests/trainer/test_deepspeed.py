"""--deepspeed on CPU: a bf16 ZeRO-1 smoke run with exact resume, and clear errors for settings
DeepSpeed cannot honour here. The runs are module-scoped (DeepSpeed's start-up is the cost);
WIKI2BERT_DS_SHM=0 skips the C++ build of its shared-memory all-reduce op (gloo is used)."""
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


def run(args):
    env = dict(os.environ, OMP_NUM_THREADS="1", WIKI2BERT_DS_SHM="0", PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True,
                         text=True, timeout=400)
    assert res.returncode == 0, res.stderr[-3000:]


def losses(out):
    return [json.loads(x)["loss"] for x in (out / "train_log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def ds_runs(tiny_shards, tiny_bert_config, tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    run(argv(tiny_shards, tiny_bert_config, root / "straight"))
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
