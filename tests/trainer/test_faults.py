"""Faults a cluster brings, survived with the losses of an undisturbed run: a damaged newest
checkpoint, --resume_from_checkpoint before any checkpoint exists, a rank SIGKILLed in the
middle of training under `torchrun --max-restarts 1`, and the same run on two `torchrun`
agents (`--nnodes 2`, c10d rendezvous, one rank each) instead of one agent with two ranks."""
from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.trainer_cli import ROOT, assert_same_run, base_args, env, read_log
from trainer.run_pretraining import main
from trainer.runtime.distributed import _free_port

pytestmark = pytest.mark.usefixtures("one_thread")
KILLING_ENTRY = Path(__file__).with_name("rank_killed_run_pretraining.py")
SCRIPT = ROOT / "trainer" / "run_pretraining.py"
# 2 ranks x 2 micro-steps, a checkpoint every 10 steps (the log windows end there too)
DDP_RUN = dict(max_steps=25, learning_rate=2e-2, log_every=5, checkpoint_every=10,
               gradient_accumulation_steps=2, eval_every=15)


@pytest.mark.faults
def test_a_damaged_newest_checkpoint_resumes_from_the_one_before(tiny_shards, tiny_bert_config,
                                                                   tmp_path, caplog):
    kw = dict(max_steps=8, checkpoint_every=3, eval_every=4)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(base_args(tiny_shards, tiny_bert_config, straight, **kw)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, parts, steps_this_run=7, **kw)) == 0
    model = parts / "checkpoints" / "ckpt_00000007" / "model.pt"
    model.write_bytes(model.read_bytes()[:1000])   # cut short, as by a full disk
    caplog.set_level(logging.INFO, logger="trainer")
    assert main(base_args(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True,
                          **kw)) == 0
    said = [r.getMessage() for r in caplog.records if " is damaged (" in r.getMessage()]
    assert len(said) == 1 and "ckpt_00000007" in said[0] and "ckpt_00000006" in said[0], said
    assert any("resumed from" in r.getMessage() and r.getMessage().split()[2].endswith("ckpt_00000006")
               for r in caplog.records)
    assert_same_run(straight, parts, 8)


def test_with_every_checkpoint_damaged_resume_stops_with_one_line(tiny_shards, tiny_bert_config,
                                                                   tmp_path, capsys):
    out = tmp_path / "out"
    assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=4, checkpoint_every=2,
                          steps_this_run=2)) == 0
    (out / "checkpoints" / "ckpt_00000002" / "model.pt").write_bytes(b"\0" * 10)
    capsys.readouterr()
    assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=4, checkpoint_every=2,
                          resume_from_checkpoint=True)) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Error:")]
    assert len(err) == 1 and "no older complete checkpoint" in err[0], err


def test_resume_flag_before_any_checkpoint_simply_starts(tiny_shards, tiny_bert_config, tmp_path):
    out = tmp_path / "fresh"
    assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=3,
                          resume_from_checkpoint=True)) == 0
    assert [r["step"] for r in read_log(out) if "loss" in r] == [1, 2, 3]


def torchrun(launcher: list[str], argv: list[str], entry=SCRIPT, extra_env=None):
    return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", *launcher, str(entry),
                             *argv], env=env(**(extra_env or {})), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(proc, timeout=240) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    return out


@pytest.fixture(scope="module")
def two_rank_run(tiny_shards, tiny_bert_config, tmp_path_factory):
    """An undisturbed run: one torchrun agent, two gloo ranks."""
    out = tmp_path_factory.mktemp("two_ranks") / "run"
    finish(torchrun(["--standalone", "--nproc_per_node=2"],
                    base_args(tiny_shards, tiny_bert_config, out, **DDP_RUN)))
    return out


@pytest.mark.slow
@pytest.mark.faults
def test_a_rank_killed_mid_training_restarts_and_gives_the_same_losses(
        two_rank_run, tiny_shards, tiny_bert_config, tmp_path):
    """Rank 1 is SIGKILLed before step 14 (its last checkpoint: step 10). torchrun stops rank 0,
    starts both again in the same store; the new ranks meet under a fresh name, resume from
    step 10 by themselves and end with the undisturbed run's losses and weights. The run was
    started with --resume_from_checkpoint and no checkpoint: it simply started."""
    out = tmp_path / "killed"
    log = finish(torchrun(["--standalone", "--nproc_per_node=2", "--max-restarts=1"],
                          base_args(tiny_shards, tiny_bert_config, out, resume_from_checkpoint=True,
                                    **DDP_RUN),
                          entry=KILLING_ENTRY, extra_env={"KILL_RANK": "1", "KILL_AT_STEP": "14"}))
    assert "exitcode: -9" in log and "resumed from" in log and "ckpt_00000010" in log, log[-3000:]
    assert_same_run(two_rank_run, out, 25)


@pytest.mark.slow
def test_two_torchrun_agents_give_the_losses_of_one_agent_with_two_ranks(
        two_rank_run, tiny_shards, tiny_bert_config, tmp_path):
    """Two nodes simulated honestly: two torchrun agents (--nnodes 2, one rank each) that meet
    through a c10d rendezvous on localhost, as srun starts them on two nodes."""
    out = tmp_path / "two_nodes"
    launcher = ["--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=c10d",
                f"--rdzv_endpoint=127.0.0.1:{_free_port()}", "--rdzv_id=two_nodes"]
    argv = base_args(tiny_shards, tiny_bert_config, out, **DDP_RUN)
    agents = [torchrun(launcher, argv) for _ in range(2)]
    for agent in agents:
        finish(agent)
    assert sorted(p.name for p in (out / "checkpoints" / "ckpt_00000025").iterdir()) == [
        "meta.json", "model.pt", "rng_rank0.pt", "rng_rank1.pt", "trainer_state.pt"]
    assert_same_run(two_rank_run, out, 25)
