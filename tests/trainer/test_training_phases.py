"""Sequence-length phases in one run (--phases): each phase its own rows, batch, masking rate,
peak and RoPE θ under one schedule; what the run records; the checks of the phases' data; and
kill -9 at any moment (mid-phase, while a phase's last checkpoint is written, right after it,
at the next phase's first step) resumed to the uninterrupted run's losses."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.helpers.trainer_cli import ROOT, assert_same_run, base_args, env, one_error, read_log
from tests.trainer.conftest import VOCAB_SIZE, make_shard_dir
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
HERE = Path(__file__).parent
# 20 steps: phase 1 (64 tokens) steps 1-10, phase 2 (128) 11-16, phase 3 (256) 17-20; a
# checkpoint every 3 steps and at each phase's end (3 6 9 10 12 15 16 18 20), evals at 7 14 20
RUN = dict(max_steps=20, checkpoint_every=3, eval_every=7, log_every=1, learning_rate=1e-2,
           model_type="modernbert", masking="dynamic", optimizer="adamw", lr_schedule="wsd",
           warmup_proportion=0.1, train_batch_size=4)


@pytest.fixture(scope="module")
def phase_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("phases")
    return {seq: make_shard_dir(root / f"s{seq}", sizes=(48, 40), test_sizes=(16,), seq_len=seq,
                                max_pred=seq // 4) for seq in (64, 128, 256)}


@pytest.fixture(scope="module")
def modern_config(tmp_path_factory):
    """A tiny ModernBERT whose config says 64 positions (raised to the longest phase's 256)."""
    path = tmp_path_factory.mktemp("cfg") / "modern.json"
    path.write_text(json.dumps({"vocab_size": VOCAB_SIZE, "hidden_size": 32, "num_hidden_layers": 3,
                                "num_attention_heads": 2, "intermediate_size": 48,
                                "max_position_embeddings": 64, "local_attention": 16,
                                "global_rope_theta": 10000.0, "local_rope_theta": 10000.0}))
    return path


def write_phases(path: Path, dirs, **extra) -> Path:
    path.write_text(json.dumps([
        {"input_dir": str(dirs[64]), "share": 0.5, "train_batch_size": 8, "mlm_probability": 0.15},
        {"input_dir": str(dirs[128]), "share": 0.3, "mlm_probability": 0.2, "global_rope_theta": 40000,
         **extra},
        {"input_dir": str(dirs[256]), "share": 0.2, "train_batch_size": 2, "seq_len": 256,
         "global_rope_theta": 160000, "learning_rate": 5e-3}]))
    return path


def phase_args(phases, cfg, out, vocab, **kw):
    return base_args(None, cfg, out, vocab=vocab, **{**RUN, **kw}) + ["--phases", str(phases)]


@pytest.fixture(scope="module")
def straight(phase_dirs, modern_config, tiny_vocab, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight") / "run"
    phases = write_phases(out.parent / "phases.json", phase_dirs)
    assert main(phase_args(phases, modern_config, out, tiny_vocab)) == 0
    return out, phases


def test_a_run_goes_through_its_phases_and_records_them(straight, phase_dirs, caplog):
    out, _ = straight
    log = read_log(out)
    starts = [(r["step"], r["phase_start"], r["seq_len"]) for r in log if "phase_start" in r]
    assert starts == [(1, 1, 64), (11, 2, 128), (17, 3, 256)]
    evals = [r["step"] for r in log if "eval_loss" in r]
    assert evals == [7, 14, 20]
    train = {r["step"]: r for r in log if "loss" in r}
    assert train[11]["lr"] == pytest.approx(1e-2) and train[18]["lr"] < 5e-3   # phase 3's peak, decaying
    assert train[20]["samples_per_sec"] > 0 and len(train) == 20
    hp = json.loads((out / "hparams.json").read_text())
    plan = hp["phase_plan"]
    assert [(p["first_step"], p["last_step"], p["seq_len"], p["train_batch_size"]) for p in plan] == [
        (1, 10, 64, 8), (11, 16, 128, 4), (17, 20, 256, 2)]
    assert [p["global_rope_theta"] for p in plan] == [10000.0, 40000.0, 160000.0]
    assert [p["mlm_probability"] for p in plan] == [0.15, 0.2, 0.15]   # left out: the flag's
    assert [p["learning_rate"] for p in plan] == [1e-2, 1e-2, 5e-3]
    ckpts = sorted(p.name for p in (out / "checkpoints").iterdir())
    # --keep_checkpoints 3, and 17 (the last before the decay: --extend starts there) among them
    assert ckpts == ["ckpt_00000017", "ckpt_00000018", "ckpt_00000020"]
    meta = json.loads((out / "checkpoints" / "ckpt_00000020" / "meta.json").read_text())
    rope = meta["model_config"]["rope_parameters"]
    assert rope["full_attention"]["rope_theta"] == 160000.0 and meta["model_config"]["global_rope_theta"] == 160000.0
    assert meta["model_config"]["max_position_embeddings"] == 256


def test_a_run_stopped_at_a_phase_boundary_resumes_to_the_same_losses(straight, modern_config, tiny_vocab,
                                                                       tmp_path, caplog):
    """--steps_this_run 10 ends exactly at phase 1's end; the resumed run starts phase 2 afresh
    (its own loader, θ 40000 set again on the rebuilt model) and gives the same losses."""
    ref, phases = straight
    out = tmp_path / "parts"
    assert main(phase_args(phases, modern_config, out, tiny_vocab, steps_this_run=10)) == 0
    assert main(phase_args(phases, modern_config, out, tiny_vocab, steps_this_run=3,
                           resume_from_checkpoint=True)) == 0
    caplog.set_level("INFO", logger="trainer")
    assert main(phase_args(phases, modern_config, out, tiny_vocab, resume_from_checkpoint=True)) == 0
    assert any("phase 2 of 3" in r.getMessage() and "resumed from" in r.getMessage()
               for r in caplog.records)
    assert_same_run(ref, out, 20)


def test_the_export_and_its_card_carry_the_phases(straight, tmp_path):
    from transformers import AutoConfig

    from trainer.export.cli import main as export

    out, _ = straight
    assert export(["--checkpoint_dir", str(out), "--output", str(tmp_path / "hf")]) == 0
    card = (tmp_path / "hf" / "README.md").read_text()
    assert "sequence lengths 64 -> 128 -> 256 in 3 phases" in card and "## Sequence-length phases" in card
    assert "| 3 | 256 | 17-20 | 2 | 0.15 | 0.005 | global 160000, local 10000 |" in card
    config = AutoConfig.from_pretrained(tmp_path / "hf")
    assert config.max_position_embeddings == 256
    assert config.rope_parameters["full_attention"]["rope_theta"] == 160000.0


def test_a_phase_changed_before_a_resume_is_refused(straight, modern_config, tiny_vocab, phase_dirs,
                                                   tmp_path, capsys):
    _, phases = straight
    out = tmp_path / "o"
    assert main(phase_args(phases, modern_config, out, tiny_vocab, steps_this_run=4)) == 0
    other = write_phases(tmp_path / "other.json", phase_dirs, learning_rate=2e-3)
    capsys.readouterr()
    assert main(phase_args(other, modern_config, out, tiny_vocab, resume_from_checkpoint=True)) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Error:")]
    assert len(err) == 1 and "the phases changed since the checkpoint" in err[0], err
    # the first phase's batch (so the global batch hparams.json records): the plan's line alone
    text = json.loads(phases.read_text())
    text[0]["train_batch_size"] = 4
    other.write_text(json.dumps(text))
    assert main(phase_args(other, modern_config, out, tiny_vocab, resume_from_checkpoint=True)) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Error:")]
    assert len(err) == 1 and "the phases changed since the checkpoint" in err[0], err


def test_a_first_phase_with_its_own_batch_and_theta_resumes(phase_dirs, modern_config, tiny_vocab, tmp_path):
    """The run's record (hparams.json, model_config.json) is its first start's, made in phase 1:
    a resume compares it with the model config as given and the first phase's global batch, so
    phase 1's own θ (set on the model in place) and batch are not taken for changes."""
    phases = write_phases(tmp_path / "phases.json", phase_dirs)
    text = json.loads(phases.read_text())
    text[0]["global_rope_theta"] = 20000
    phases.write_text(json.dumps(text))
    out = tmp_path / "run"
    assert main(phase_args(phases, modern_config, out, tiny_vocab, steps_this_run=3)) == 0
    recorded = json.loads((out / "model_config.json").read_text())
    assert recorded["rope_parameters"]["full_attention"]["rope_theta"] == 10000.0   # phase 1 sets 20000
    assert json.loads((out / "hparams.json").read_text())["global_batch_size"] == 8
    assert main(phase_args(phases, modern_config, out, tiny_vocab, steps_this_run=3,
                           resume_from_checkpoint=True)) == 0
    assert [r["step"] for r in read_log(out) if "loss" in r][-1] == 6


def test_bad_phase_data_is_one_line_each(phase_dirs, modern_config, tiny_bert_config, tiny_vocab,
                                          tmp_path, capsys):
    out = tmp_path / "never"
    # rows longer than a learned position table (BERT, 64 positions)
    f = write_phases(tmp_path / "p.json", phase_dirs)
    text = json.loads(f.read_text())
    for p in text:
        p.pop("global_rope_theta", None)
    f.write_text(json.dumps(text))
    argv = phase_args(f, tiny_bert_config, out, tiny_vocab, model_type="bert")
    line = one_error(capsys, argv, out=out)
    assert "phase 3" in line and "learned position table covers 64" in line
    assert "set max_position_embeddings in the model config" in line
    assert "pass --max_position_embeddings 256 beside --init_from" in line
    # a seq_len that is not the data's
    text[2]["seq_len"] = 512
    f.write_text(json.dumps(text))
    line = one_error(capsys, phase_args(f, modern_config, out, tiny_vocab), out=out)
    assert "says seq_len 512 but its rows are 256 tokens long" in line
    # a phase encoded with another tokenizer than the others
    text[2]["seq_len"] = 256
    f.write_text(json.dumps(text))
    for seq, fp in ((64, "a" * 16), (128, "b" * 16)):
        (phase_dirs[seq] / "manifest.json").write_text(json.dumps(
            {"vocab": f"/vocabs/{fp}", "tokenizer": {"fingerprint": fp, "folder": f"/vocabs/{fp}"}}))
    try:
        line = one_error(capsys, phase_args(f, modern_config, out, tiny_vocab), out=out)
    finally:
        for seq in (64, 128):
            (phase_dirs[seq] / "manifest.json").unlink()
    assert "phase 2 (input_dir" in line and "not with the tokenizer of phase 1" in line
    # a phase whose folder is not there
    (f.parent / "missing.json").write_text(json.dumps([{"input_dir": str(tmp_path / "nope"), "share": 1}]))
    line = one_error(capsys, phase_args(f.parent / "missing.json", modern_config, out, tiny_vocab), out=out)
    assert "phase 1's input_dir" in line and "is not a directory" in line


def kill_and_resume(entry, extra_env, phases, cfg, vocab, out) -> str:
    argv = phase_args(phases, cfg, out, vocab, resume_from_checkpoint=True)
    res = subprocess.run([sys.executable, str(entry), *argv], env=env(**extra_env), capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert res.returncode == -9, res.stderr[-3000:]
    assert main(argv) == 0
    return res.stderr


@pytest.mark.slow
@pytest.mark.faults
@pytest.mark.parametrize("entry,kill,resumes_from", [
    ("rank_killed_run_pretraining.py", {"KILL_RANK": "0", "KILL_AT_STEP": "14"}, 12),   # mid-phase 2
    ("killed_at_rename_run_pretraining.py", {"KILL_AT_RENAME": "4", "KILL_WHEN": "after"}, 10),
    ("killed_at_rename_run_pretraining.py", {"KILL_AT_RENAME": "7", "KILL_WHEN": "before"}, 15),
    ("rank_killed_run_pretraining.py", {"KILL_RANK": "0", "KILL_AT_STEP": "17"}, 16),   # phase 3's first
], ids=["mid-phase", "right-after-the-boundary-checkpoint", "while-the-boundary-checkpoint-is-written",
        "at-the-next-phases-first-step"])
def test_kill_9_at_any_moment_resumes_to_the_uninterrupted_losses(
        straight, modern_config, tiny_vocab, tmp_path, caplog, entry, kill, resumes_from):
    ref, phases = straight
    out = tmp_path / "killed"
    caplog.set_level("INFO", logger="trainer")
    kill_and_resume(HERE / entry, kill, phases, modern_config, tiny_vocab, out)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("resumed from")]
    assert len(said) == 1 and f"ckpt_{resumes_from:08d} at step {resumes_from}" in said[0], said
    assert [r["step"] for r in read_log(out) if "phase_start" in r] == [1, 11, 17]
    assert_same_run(ref, out, 20)


@pytest.mark.slow
@pytest.mark.faults
def test_two_gloo_ranks_killed_at_a_phase_boundary_resume_to_the_same_losses(
        phase_dirs, modern_config, tiny_vocab, tmp_path):
    """Under torchrun --max-restarts 1, rank 1 dies as it is about to train phase 2's first step
    (the checkpoint of phase 1's end just written): the restarted ranks resume at the boundary
    and end with the losses of an undisturbed two-rank run."""
    phases = write_phases(tmp_path / "phases.json", phase_dirs)

    def torchrun(out, entry, extra_env=None, restarts=0):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               f"--max-restarts={restarts}", str(entry),
               *phase_args(phases, modern_config, out, tiny_vocab, resume_from_checkpoint=True)]
        res = subprocess.run(cmd, env=env(**(extra_env or {})), capture_output=True, text=True,
                             timeout=400, cwd=ROOT)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
        return res.stdout + res.stderr

    torchrun(tmp_path / "undisturbed", ROOT / "trainer" / "run_pretraining.py")
    log = torchrun(tmp_path / "killed", HERE / "rank_killed_run_pretraining.py",
                   {"KILL_RANK": "1", "KILL_AT_STEP": "11"}, restarts=1)
    assert "exitcode: -9" in log and "ckpt_00000010" in log and "phase 2 of 3" in log, log[-3000:]
    assert_same_run(tmp_path / "undisturbed", tmp_path / "killed", 20)


@pytest.mark.slow
def test_a_budget_run_gives_each_phase_its_share_of_the_time(phase_dirs, modern_config, tiny_vocab, tmp_path):
    """--train_budget 12s over phases of 0.5 / 0.3 / 0.2: each phase timed on its own rows, the
    steps planned (and re-planned) so that each takes about its share of the time."""
    budget = 12.0
    phases = write_phases(tmp_path / "phases.json", phase_dirs)
    out = tmp_path / "budget"
    assert main(phase_args(phases, modern_config, out, tiny_vocab, train_budget="12s", checkpoint_every=1000,
                           eval_every=1000, log_every=20)) == 0
    log = read_log(out)
    at = [r["budget_elapsed_s"] for r in log if "phase_start" in r] + [log[-1]["budget_spent_s"]]
    assert len(at) == 4 and abs(at[-1] - budget) <= 0.05 * budget, log[-1]
    took = [b - a for a, b in zip(at, at[1:])]
    for share, seconds in zip((0.5, 0.3, 0.2), took):
        assert abs(seconds / (at[-1] - at[0]) - share) < 0.1, took
    hp = json.loads((out / "hparams.json").read_text())
    assert len(hp["phase_plan"]) == 3 and hp["max_steps"] > 3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_phases_on_cuda_with_compiled_layers_resume_at_a_boundary(straight, modern_config, tiny_vocab, tmp_path):
    """CUDA in bf16 (torch.compile on by default): θ changes between compiled layers' calls (the
    rotary tables are computed outside them), and a run stopped at phase 1's end resumes into
    phase 2 with the uninterrupted run's losses (within bf16's rounding)."""
    _, phases = straight
    full, parts = tmp_path / "full", tmp_path / "parts"
    assert main(phase_args(phases, modern_config, full, tiny_vocab, device="cuda")) == 0
    assert main(phase_args(phases, modern_config, parts, tiny_vocab, device="cuda", steps_this_run=10)) == 0
    assert main(phase_args(phases, modern_config, parts, tiny_vocab, device="cuda",
                           resume_from_checkpoint=True)) == 0
    a = [r["loss"] for r in read_log(full) if "loss" in r]
    b = [r["loss"] for r in read_log(parts) if "loss" in r]
    assert len(a) == len(b) == 20 and all(map(torch.isfinite, torch.tensor(a)))
    torch.testing.assert_close(torch.tensor(b), torch.tensor(a), rtol=2e-2, atol=2e-2)
    meta = json.loads((full / "checkpoints" / "ckpt_00000020" / "meta.json").read_text())
    assert meta["model_config"]["rope_parameters"]["full_attention"]["rope_theta"] == 160000.0


def test_phases_of_packed_rows_pass_the_documents_layout_through_and_resume_exactly(
        modern_config, tiny_vocab, tmp_path, caplog):
    """Packed rows that mark their documents (encode --pack's second layout) at 64 then 128
    tokens: attention stays within documents in both phases (the loader's layout passes through),
    and a run stopped at the boundary resumes to the uninterrupted losses."""
    from tests.helpers.doc_attention import packed_dir

    phases = tmp_path / "packed.json"
    phases.write_text(json.dumps([
        {"input_dir": str(packed_dir(tmp_path / "p64", 64)), "share": 0.5},
        {"input_dir": str(packed_dir(tmp_path / "p128", 128)), "share": 0.5, "train_batch_size": 2,
         "global_rope_theta": 40000}]))
    kw = dict(max_steps=8, checkpoint_every=100, eval_every=4, no_nsp=True)
    caplog.set_level("INFO", logger="trainer")
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(phase_args(phases, modern_config, straight, tiny_vocab, **kw)) == 0
    assert any(r.getMessage().startswith("doc_attention within") for r in caplog.records)
    assert main(phase_args(phases, modern_config, parts, tiny_vocab, steps_this_run=4, **kw)) == 0
    assert main(phase_args(phases, modern_config, parts, tiny_vocab, resume_from_checkpoint=True, **kw)) == 0
    assert [r["step"] for r in read_log(straight) if "phase_start" in r] == [1, 5]
    assert json.loads((straight / "hparams.json").read_text())["doc_attention"] == "within"
    assert_same_run(straight, parts, 8)


@pytest.mark.slow
def test_a_budget_replan_at_a_phase_end_extends_that_phase(phase_dirs, modern_config, tiny_vocab, tmp_path,
                                                            monkeypatch):
    """The pace checked at a phase's last step can move the next phase's start (it has trained
    nothing yet): the phase goes on to the new start, and the next one starts there (a slow CI
    run re-planned at such a step once and stopped on the plan's assertion)."""
    from trainer.runtime.pacing import Pacer

    moved = []

    def check(self, step, phase, starts, end, env):
        if not moved and phase + 1 < len(starts) and step == starts[phase + 1]:
            moved.append(step)
            later = [s + 3 for s in starts[phase + 1:]]
            return starts[:phase + 1] + later, end + 3, {
                "elapsed_s": 1.0, "pace_s": 0.01, "timed_pace_s": 0.01, "forecast_s": 4.0,
                "new_forecast_s": 4.0, "budget_s": 4.0}
        return None

    monkeypatch.setattr(Pacer, "due", lambda self, step: True)
    monkeypatch.setattr(Pacer, "check", check)
    phases = write_phases(tmp_path / "phases.json", phase_dirs)
    out = tmp_path / "budget"
    assert main(phase_args(phases, modern_config, out, tiny_vocab, train_budget="4s", checkpoint_every=1000,
                           eval_every=1000, log_every=1)) == 0
    log = read_log(out)
    starts = [r["step"] for r in log if "phase_start" in r]
    assert len(moved) == 1 and starts[1] == moved[0] + 4, (moved, starts)
    assert [r["step"] for r in log if "replan_end" in r] == moved


def test_the_record_says_what_the_device_did(straight):
    """Each logged step and evaluation gives real tokens/s, model TFLOP/s, MFU (null on the CPU:
    no card's peak), peak memory (the process's on the CPU) and the GPU's busy share (null on the
    CPU); each phase's last record also its whole phase's (trainer/runtime/card_use.py)."""
    out, _ = straight
    log = read_log(out)
    train = [r for r in log if "loss" in r]
    seq = {r["step"]: r["seq_len"] for r in log if "phase_start" in r}
    for r in train:
        assert r["tokens_per_sec"] > 0 and r["tflops"] > 0 and r["peak_memory_gib"] > 0.05
        assert r["mfu"] is None and r["gpu_busy"] is None
        row_len = max(length for step, length in seq.items() if step <= r["step"])
        assert 0 < r["tokens_per_sec"] / r["samples_per_sec"] <= row_len   # real tokens a row
    ends = [r for r in train if "phase_tokens_per_sec" in r]
    assert [r["step"] for r in ends] == [10, 16, 20]
    for r in ends:
        assert r["phase_tokens_per_sec"] > 0 and r["phase_mfu"] is None and r["phase_peak_memory_gib"] > 0.05
    evals = [r for r in log if "eval_loss" in r]
    assert evals and all(r["tokens_per_sec"] > 0 and "mfu" in r for r in evals)
