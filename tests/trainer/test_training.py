"""The training loop (trainer/loop.py) on CPU, fp32, tiny model: exact resume (also from
a checkpoint of the older RNG format), phase 2, bf16 autocast, two gloo ranks, the shipped
CPU config."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.helpers.trainer_cli import ROOT, assert_same_run, base_args, env, read_log
from trainer.run_pretraining import main

TRACED_ENTRY = Path(__file__).with_name("traced_run_pretraining.py")
pytestmark = pytest.mark.usefixtures("one_thread")


def test_resume_gives_the_losses_of_an_uninterrupted_run(tiny_shards, tiny_bert_config, tmp_path):
    kw = dict(gradient_accumulation_steps=2, eval_every=3, max_steps=8, checkpoint_every=3)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(base_args(tiny_shards, tiny_bert_config, straight, **kw)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, parts, steps_this_run=4, **kw)) == 0
    # a run killed after its step-3 checkpoint: step 4 was logged, then a half-written checkpoint
    (parts / "checkpoints" / "ckpt_00000004").rename(parts / "checkpoints" / ".tmp_ckpt_00000004")
    assert main(base_args(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True,
                          **kw)) == 0
    # the same losses and the same final weights
    assert_same_run(straight, parts, 8)
    # a finished run resumed again has nothing to do
    assert main(base_args(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True,
                          **kw)) == 0


def test_every_run_ends_with_one_eval_also_a_run_shorter_than_eval_every(tiny_shards, tiny_bert_config,
                                                                         tmp_path):
    from trainer.export.card import _last_records

    def evals(out):
        return [r["step"] for r in read_log(out) if "eval_loss" in r]

    short = tmp_path / "short"   # max_steps below eval_every: one eval, at the last step
    assert main(base_args(tiny_shards, tiny_bert_config, short, max_steps=4, eval_every=100)) == 0
    assert evals(short) == [4]
    assert _last_records(short)[1]["step"] == 4   # the model card's "last evaluation"
    before = (short / "train_log.jsonl").read_text()
    assert main(base_args(tiny_shards, tiny_bert_config, short, max_steps=4, eval_every=100,
                          resume_from_checkpoint=True)) == 0   # finished: nothing is logged twice
    assert (short / "train_log.jsonl").read_text() == before
    # the last step on the eval_every grid: still one eval there
    grid = tmp_path / "grid"
    assert main(base_args(tiny_shards, tiny_bert_config, grid, max_steps=4, eval_every=2)) == 0
    assert evals(grid) == [2, 4]
    # a run in parts (--steps_this_run) evaluates at its last step only, as an uninterrupted run
    parts = tmp_path / "parts"
    assert main(base_args(tiny_shards, tiny_bert_config, parts, max_steps=4, eval_every=100,
                          steps_this_run=2)) == 0
    assert evals(parts) == []
    assert main(base_args(tiny_shards, tiny_bert_config, parts, max_steps=4, eval_every=100,
                          resume_from_checkpoint=True)) == 0
    assert_same_run(short, parts, 4)
    # --eval_every 0 still means no evaluation at all
    none = tmp_path / "none"
    assert main(base_args(tiny_shards, tiny_bert_config, none, max_steps=2, eval_every=0)) == 0
    assert evals(none) == []


def test_a_checkpoint_of_the_older_format_resumes_exactly(tiny_shards, tiny_bert_config, tmp_path):
    """Checkpoints written before the RNG files held tensors only (numpy's state tuple, with its
    numpy array, pickled as is) still resume, and give the uninterrupted run's losses."""
    kw = dict(max_steps=6, checkpoint_every=3, eval_every=3)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(base_args(tiny_shards, tiny_bert_config, straight, **kw)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, parts, steps_this_run=3, **kw)) == 0
    rng_file = parts / "checkpoints" / "ckpt_00000003" / "rng_rank0.pt"
    new = torch.load(rng_file, weights_only=True)
    n = new["numpy"]
    old_numpy = (n["name"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                 n["cached_gaussian"])
    torch.save({"torch": new["torch"], "numpy": old_numpy, "python": new["python"]}, rng_file)
    with pytest.raises(Exception, match="numpy"):  # the old way: not loadable as plain data
        torch.load(rng_file, weights_only=True)
    assert main(base_args(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True,
                          **kw)) == 0
    assert_same_run(straight, parts, 6)


def test_phase2_starts_from_phase1_weights_with_a_fresh_schedule(tiny_shards, tiny_bert_config, tmp_path):
    from trainer.config import load_config
    from trainer.loop import Trainer

    p1 = tmp_path / "p1"
    assert main(base_args(tiny_shards, tiny_bert_config, p1, max_steps=2, checkpoint_every=2)) == 0
    trainer = Trainer(load_config(base_args(tiny_shards, tiny_bert_config, tmp_path / "p2", phase2=True,
                                            init_checkpoint=p1, max_steps=4)))
    w1 = torch.load(p1 / "checkpoints" / "ckpt_00000002" / "model.pt", weights_only=True)
    assert all(torch.equal(v, trainer.model.state_dict()[k]) for k, v in w1.items())
    assert trainer.step == 0 and trainer.lr == 0.0 and not trainer.optimizer.state
    trainer.train()
    assert json.loads((tmp_path / "p2" / "checkpoints" / "ckpt_00000004" / "meta.json").read_text())["phase"] == 2
    # a phase-2 run from a folder with no checkpoint: one line, no output_dir left behind
    assert main(base_args(tiny_shards, tiny_bert_config, tmp_path / "p2b", phase2=True,
                          init_checkpoint=tmp_path / "nowhere")) == 1
    assert not (tmp_path / "p2b").exists()
    # resuming phase 2 in phase 1's output_dir is refused
    assert main(base_args(tiny_shards, tiny_bert_config, p1, phase2=True, init_checkpoint=p1,
                          resume_from_checkpoint=True)) == 1


def test_bf16_autocast_smoke(tiny_shards, tiny_bert_config, tmp_path):
    out = tmp_path / "bf16"
    assert main(base_args(tiny_shards, tiny_bert_config, out, precision="bf16", max_steps=2,
                          train_batch_size=4)) == 0
    assert all(torch.isfinite(torch.tensor(r["loss"])) for r in read_log(out))


def torchrun(shards, cfg, out, entry=ROOT / "trainer" / "run_pretraining.py", **kw):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(entry), *base_args(shards, cfg, out, **kw)]
    res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]


@pytest.mark.slow
def test_two_gloo_ranks_learn_from_disjoint_data_and_resume_exactly(tiny_shards, tiny_bert_config,
                                                                     tmp_path):
    """2 ranks, 2 micro-steps per step: the loss falls, the ranks read disjoint data; a run
    killed after step 12 (its checkpoint half-written) resumes from step 10 and gives the
    uninterrupted run's losses and weights. The uninterrupted run goes through
    traced_run_pretraining.py, which records a hash of every sample each rank trains on."""
    out, parts = tmp_path / "ddp", tmp_path / "parts"
    kw = dict(max_steps=30, learning_rate=2e-2, log_every=5, checkpoint_every=10,
              gradient_accumulation_steps=2, eval_every=15)
    torchrun(tiny_shards, tiny_bert_config, out, entry=TRACED_ENTRY, **kw)
    log = [r for r in read_log(out) if "loss" in r]
    assert log[-1]["loss"] < log[0]["loss"] - 0.1, [r["loss"] for r in log]
    r0 = (out / "data_trace_rank0.txt").read_text().split()
    r1 = (out / "data_trace_rank1.txt").read_text().split()
    per_rank = (160 + 96 + 128) // 2
    assert len(r0) == len(r1) == 30 * 2 * 8
    # within an epoch the two ranks' samples are disjoint (and each rank's are distinct)
    e0, e1 = set(r0[:per_rank]), set(r1[:per_rank])
    assert len(e0) == len(e1) == per_rank and not e0 & e1
    assert sorted(os.listdir(out / "checkpoints" / "ckpt_00000030")) == [
        "meta.json", "model.pt", "rng_rank0.pt", "rng_rank1.pt", "trainer_state.pt"]

    torchrun(tiny_shards, tiny_bert_config, parts, steps_this_run=12, **kw)
    (parts / "checkpoints" / "ckpt_00000012").rename(parts / "checkpoints" / ".tmp_ckpt_00000012")
    torchrun(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True, **kw)
    assert_same_run(out, parts, 30)


def test_shipped_tiny_cpu_config_learns_in_30_steps(tiny_shards, tmp_path):
    """trainer/configs/tiny_cpu.json as shipped (BERT-tiny, 32k vocab, its lr and schedule):
    within 30 of its 200 steps the MLM loss must leave ln(vocab_size) (a too-low lr does not)."""
    import math

    out = tmp_path / "tiny"
    argv = ["--config_file", str(ROOT / "trainer/configs/tiny_cpu.json"), "--input_dir",
            str(tiny_shards), "--output_dir", str(out), "--steps_this_run", "30",
            "--eval_every", "0", "--no-tensorboard", "--checkpoint_every", "1000"]
    assert main(argv) == 0
    vocab = json.loads((out / "model_config.json").read_text())["vocab_size"]
    last = [r for r in read_log(out) if "mlm_loss" in r][-1]  # mean of steps 21-30
    assert last["step"] == 30
    assert last["mlm_loss"] < math.log(vocab) - 1.0, (last["mlm_loss"], math.log(vocab))
