"""scripts/slurm/pretrain.sbatch submitted to a real (local) Slurm: a tiny CPU run of two gloo
ranks, the same run cancelled with scancel and submitted again (it continues where it stopped:
the same losses and weights), and bad inputs refused in one line before torchrun starts."""
from __future__ import annotations

import subprocess
import time

import pytest

from tests.helpers.slurm_cluster import ROOT, submit, wait_for
from tests.helpers.trainer_cli import assert_same_run, base_args, read_log

pytestmark = pytest.mark.slurm
SCRIPT = ROOT / "scripts" / "slurm" / "pretrain.sbatch"
RUN = dict(max_steps=40, learning_rate=2e-2, log_every=5, checkpoint_every=10, eval_every=30,
           gradient_accumulation_steps=2, train_batch_size=8)


def job_env(slurm, **extra):
    return dict(slurm, OMP_NUM_THREADS="1", NPROC_PER_NODE="2", **extra)


def run_job(slurm, args, log, env=None, until=None):
    job = submit(SCRIPT, env or job_env(slurm), f"--output={log}", "--cpus-per-task=2",
                 args=args, cwd=ROOT)
    return job, wait_for(job, env or slurm, timeout=180, until=until)


def trainer_argv(inputs, out, **kw):
    shards, cfg, vocab = inputs
    return base_args(shards, cfg, out, vocab=vocab, **{**RUN, **kw})


@pytest.mark.slow
def test_pretrain_job_cancelled_and_submitted_again_continues_where_it_stopped(
        slurm, tiny_run_inputs, tmp_path):
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    _, rc = run_job(slurm, trainer_argv(tiny_run_inputs, straight), tmp_path / "straight.out")
    assert rc == 0, (tmp_path / "straight.out").read_text()[-3000:]
    text = (tmp_path / "straight.out").read_text()
    assert "1 node(s) x 2 rank(s)" in text and "done: step 40 of 40" in text
    assert (straight / "checkpoints" / "ckpt_00000040" / "rng_rank1.pt").is_file()

    first = parts / "checkpoints" / "ckpt_00000010"
    job, rc = run_job(slurm, trainer_argv(tiny_run_inputs, parts), tmp_path / "first.out",
                      until=first.is_dir)
    assert rc == -1   # the first checkpoint is there: cancel the job now, mid-run
    subprocess.run(["scancel", job], env=slurm, check=True)
    assert wait_for(job, slurm) != 0
    done = sorted(p.name for p in (parts / "checkpoints").glob("ckpt_*"))
    assert "ckpt_00000040" not in done, f"the job ended before it was cancelled: {done}"
    _, rc = run_job(slurm, trainer_argv(tiny_run_inputs, parts), tmp_path / "again.out")
    assert rc == 0, (tmp_path / "again.out").read_text()[-3000:]
    assert "resumed from" in (tmp_path / "again.out").read_text()
    assert_same_run(straight, parts, 40)
    assert [r["step"] for r in read_log(parts) if "loss" in r] == list(range(5, 41, 5))


@pytest.mark.parametrize("case, expected", [
    ("venv", "no virtual environment at"),
    ("input_dir", "does not exist on"),
    ("vocab", "--vocab_file"),
])
def test_pretrain_job_with_a_missing_input_fails_in_one_line(slurm, tiny_run_inputs, tmp_path,
                                                             case, expected):
    env = job_env(slurm, WIKI2BERT_VENV=str(tmp_path / "no_venv")) if case == "venv" else None
    shards, cfg, vocab = tiny_run_inputs
    missing = tmp_path / "missing"
    inputs = (missing if case == "input_dir" else shards, cfg,
              missing if case == "vocab" else vocab)
    log = tmp_path / "job.out"
    started = time.monotonic()
    _, rc = run_job(slurm, trainer_argv(inputs, tmp_path / "out"), log, env=env)
    assert rc != 0
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and expected in lines[0], lines
    assert not (tmp_path / "out").exists()
    assert time.monotonic() - started < 30
