"""--deepspeed on CPU (trainer/loop.py with DeepSpeed's engine): a bf16 ZeRO-1 smoke run
with exact resume, and the checkpoint it writes. The runs are module-scoped (DeepSpeed's
start-up is the cost).

The uninterrupted run takes DeepSpeed's default path, which JIT-builds its C++ shm_comm op
(about 1-3.5 min once per machine, then cached in ~/.cache/torch_extensions): it is what a user
gets, and a build failure (compiler, headers, a torch/DeepSpeed mismatch) would otherwise show
only to users. That is the suite's one build; the other runs set WIKI2BERT_DS_SHM=0 (gloo)
and must give the same losses. In a virtualenv the build goes to the venv's own
torch_extensions folder: the build's include paths name the venv, so venvs sharing
~/.cache/torch_extensions (worktrees on one machine) rebuilt it for each other in turn."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

from tests.helpers.hostile_pickle import RunsCode
from tests.helpers.trainer_cli import ROOT, SCRIPT
from tests.helpers.trainer_cli import deepspeed_args as argv

pytest.importorskip("deepspeed")


def run(args, shm=False):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    env.pop("WIKI2BERT_DS_SHM", None)
    # the op's build is keyed by its sources' paths: one cache per virtualenv, so that worktrees
    # on one machine do not rebuild it in turn (or wait on each other's lock)
    env.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(sys.prefix, "torch_extensions"))
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
    from trainer.models.bert_network import BertConfig, BertForPreTraining

    expected = BertForPreTraining(BertConfig.from_json_file(tiny_bert_config)).state_dict()
    assert set(sd) == set(expected)
    assert all(v.dtype == torch.float32 for v in sd.values() if v.is_floating_point())
    # fp32 master weights (not the bf16 working copy): not all representable in bf16
    w = sd["bert.encoder.layer.0.attention.self.query.weight"]
    assert not torch.equal(w, w.bfloat16().float())


@pytest.mark.slow
def test_a_deepspeed_file_holding_code_is_refused_not_run(ds_runs, tiny_shards, tiny_bert_config,
                                                         tmp_path):
    """DeepSpeed's own files are read with weights_only=True too (its loader would unpickle)."""
    run_dir, marker = tmp_path / "run", tmp_path / "code_ran"
    shutil.copytree(ds_runs[1], run_dir)
    states = run_dir / "checkpoints" / "ckpt_00000004" / "deepspeed" / "mp_rank_00_model_states.pt"
    torch.save({**torch.load(states, weights_only=True), "extra": RunsCode(marker)}, states)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), WIKI2BERT_DS_SHM="0")
    env.pop("WIKI2BERT_TRACEBACK", None)
    res = subprocess.run([sys.executable, str(SCRIPT), *argv(tiny_shards, tiny_bert_config, run_dir,
                                                              resume_from_checkpoint=True)],
                         env=env, capture_output=True, text=True, timeout=480)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-3000:]
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(errors) == 1 and "refused" in errors[0], res.stderr[-3000:]
    assert not marker.exists()
