"""What a trainer user sees: how many instances an evaluation used (and a warning when they are
too few to mean much), what its accuracy scores (the static masks, issue 60), and a user error
under a real torchrun printed once, with torchrun's own
summary showing the message."""
from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from tests.helpers.signals import default_sigint
from tests.helpers.trainer_cli import SCRIPT, base_args, env, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_eval_says_how_many_instances_and_that_64_are_too_few(tiny_shards, tiny_bert_config,
                                                                   tmp_path, caplog):
    out = tmp_path / "run"
    caplog.set_level(logging.INFO, logger="trainer")
    assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=2, eval_every=2,
                          checkpoint_every=2)) == 0
    (ev,) = [r for r in read_log(out) if "eval_loss" in r]
    assert ev["eval_instances"] == 64            # the one test shard, all of it
    messages = [r.getMessage() for r in caplog.records]
    (line,) = [m for m in messages if "eval on 64 instances" in m]
    # issue 60: the accuracy is named for what it scores (make pretrain's closing one is at [MASK] alone)
    assert "(acc " in line and " at the test rows' static masks, 80% [MASK] / 10% random / 10% kept)" in line
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
                  and "held-out instances" in r.getMessage()]
    assert "under 1,000" in warning and "pipeline shard --min-test-sentences" in warning


@pytest.mark.slow
def test_a_user_error_under_torchrun_is_printed_once_and_in_torchruns_summary(tiny_bert_config,
                                                                              tmp_path):
    (tmp_path / "empty").mkdir()
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(SCRIPT), *base_args(tmp_path / "empty", tiny_bert_config, tmp_path / "o")]
    res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert res.returncode != 0
    ours = [ln for ln in res.stderr.splitlines() if ln.startswith("Error: ")]
    assert len(ours) == 1 and "no *training*.hdf5" in ours[0]          # rank 0 only
    summary = res.stderr[res.stderr.index("Root Cause"):]
    assert "rank      : 0" in summary and f"traceback : {ours[0]}" in summary


@pytest.mark.parametrize("launcher", ["torch.distributed.run", "trainer.launch"])
def test_init_from_a_folder_that_is_no_model_is_one_first_line(launcher, tmp_path):
    """Issue 46: the trainer's line comes first under both launchers; `python -m trainer.launch`
    (what the demo and make pretrain run) prints nothing after it: no torchrun traceback, no
    summary, the rank's exit status. (Plain torchrun's agent still prints its ChildFailedError
    after the line: its own code, which no rank can quiet.)"""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "readme.txt").write_text("not a model")
    cmd = [sys.executable, "-m", launcher, "--standalone", "--nproc_per_node=2", str(SCRIPT),
           "--init_from", str(folder), "--input_dir", str(tmp_path), "--output_dir", str(tmp_path / "o")]
    res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and lines[0] == (
        f"Error: --init_from {folder} holds no model: give a transformers model folder (config.json "
        "with model.safetensors or pytorch_model.bin) or a wiki2bert run (its --output_dir or one of "
        "its checkpoints/ckpt_* folders)"), res.stderr[-3000:]
    if launcher == "trainer.launch":
        assert lines == lines[:1] and "Traceback" not in res.stderr, res.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["torch.distributed.run", "trainer.launch"])
def test_ctrl_c_under_torchrun_is_one_line_of_ours_and_the_run_resumes(launcher, tiny_shards, tiny_bert_config,
                                                                       tmp_path):
    """Ctrl-C reaches torchrun and both ranks (one process group, as in a terminal): the ranks
    print one line between them, saying how to resume, and no traceback; the rerun resumes.
    Plain torchrun's agent still prints its SignalException; `python -m trainer.launch` (what the
    demo and make pretrain use) prints nothing else at all."""
    import os
    import signal
    import time

    out = tmp_path / "o"
    cmd = [sys.executable, "-m", launcher, "--standalone", "--nproc_per_node=2", str(SCRIPT),
           *base_args(tiny_shards, tiny_bert_config, out, max_steps=100000, checkpoint_every=4)]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 240
        # any checkpoint (older ones are removed as newer ones are written: keep_checkpoints)
        while not list(out.glob("checkpoints/ckpt_*")) and time.monotonic() < deadline:
            time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    ours = [ln for ln in err.splitlines() if ln.startswith("Error: ")]
    assert ours == ["Error: interrupted; rerun with --resume_from_checkpoint to continue from the last "
                    "checkpoint"], err[-3000:]
    worker_tracebacks = err.count('File "' + str(SCRIPT))
    assert worker_tracebacks == 0, err[-3000:]
    if launcher == "trainer.launch":
        others = [ln for ln in err.splitlines() if " trainer: " not in ln and not ln.startswith("Error: ")]
        assert others == [] and proc.returncode == 130, err[-3000:]   # torchrun's own lines left out
    last = max(int(p.name.split("_")[1]) for p in (out / "checkpoints").glob("ckpt_*"))
    resume = [*cmd[:6], *base_args(tiny_shards, tiny_bert_config, out, max_steps=last + 2, checkpoint_every=4,
                                   resume_from_checkpoint=True)]
    res = subprocess.run(resume, env=env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "resumed from" in res.stderr, res.stderr[-2000:]
