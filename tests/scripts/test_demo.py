"""`make demo` must not rot: its pipeline part on the shipped sample (quick settings), the
rerun that skips finished work, and the skip logic of its training and export steps."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scripts" / "demo.py"


demo = load_script("scripts/demo.py")


def run_demo(*args: str) -> subprocess.CompletedProcess:
    """The command `make demo` runs, from the repo root, as a user would."""
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, str(DEMO), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=300)


@pytest.mark.slow
def test_demo_pipeline_part_on_the_sample_then_rerun_skips(sample_dump, tmp_path):
    quick = ["--only", "pipeline", "--data-dir", str(tmp_path), "--vocab-size", "600",
             "--dupe-factor", "1", "--workers", "1"]
    first = run_demo(*quick)
    assert first.returncode == 0, first.stderr[-3000:]
    settings = demo.Settings(data_dir=tmp_path, vocab_size=600, dupe_factor=1)
    for seq, pred in settings.encode:
        files = sorted((settings.hdf5_dir(seq, pred) / "huwiki").glob("huwiki_training_*.hdf5"))
        assert files, f"no seq {seq} training shards"
        assert (settings.hdf5_dir(seq, pred) / "manifest.json").is_file()
    vocab = (settings.vocab_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(vocab) <= 600 and vocab[0] == "[PAD]" and vocab[103] == "[MASK]"
    # the model config the demo trains must fit the default demo vocab
    bert = json.loads((demo.CONFIGS / "demo_bert_tiny.json").read_text(encoding="utf-8"))
    assert bert["vocab_size"] >= demo.Settings(data_dir=tmp_path).vocab_size
    assert "-> pipeline:" in first.stdout and "artefacts:" in first.stdout

    # the rerun skips: every stage says so (a wall-time bound here failed on a loaded machine)
    again = run_demo(*quick)
    assert again.returncode == 0, again.stderr[-3000:]
    for stage in ("extract", "format", "split", "filter", "vocab", "shard", "encode"):
        assert f"{stage}: already done, nothing rewritten" in again.stderr, stage


def fake_checkpoint(run_dir: Path, step: int) -> Path:
    """A checkpoint as trainer/checkpoint/layout.py lays it out (contents do not matter here)."""
    ckpt = run_dir / "checkpoints" / f"ckpt_{step:08d}"
    ckpt.mkdir(parents=True)
    (ckpt / "model.pt").write_bytes(b"")
    (ckpt / "meta.json").write_text(json.dumps({"step": step, "phase": 1}), encoding="utf-8")
    return ckpt


def test_finished_training_is_not_started_again(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path, phase1_steps=300)
    fake_checkpoint(s.runs / "phase1", 100)
    fake_checkpoint(s.runs / "phase1", 300)
    (s.runs / "phase1" / "checkpoints" / ".tmp_ckpt_00000400").mkdir()  # half-written: ignored
    assert demo.trained_step(s.runs / "phase1") == 300
    monkeypatch.setattr(demo, "run_command", lambda *a, **k: pytest.fail("training was rerun"))
    assert "already trained to step 300" in demo.train(s, 1)


def test_unfinished_training_resumes_with_torchrun(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path, phase2_steps=40)
    fake_checkpoint(s.runs / "phase2", 20)
    calls = []
    monkeypatch.setattr(demo, "run_command", lambda cmd, step, env=None: calls.append(cmd))
    demo.train(s, 2)
    (cmd,) = calls
    words = [str(c) for c in cmd]
    assert words[1:5] == ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    for flag in ("--resume_from_checkpoint", "--phase2", "--init_checkpoint"):
        assert flag in words
    assert words[words.index("--max_steps") + 1] == "40"
    assert "seq_len_512_max_pred_80" in words[words.index("--input_dir") + 1]


def test_export_is_skipped_when_newer_than_its_checkpoint(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path)
    ckpt = fake_checkpoint(s.runs / "phase2", 40)
    calls = []
    monkeypatch.setattr(demo, "run_command", lambda cmd, step, env=None: calls.append(cmd))
    demo.export(s)
    assert len(calls) == 1  # no export yet
    s.hf_dir.mkdir(parents=True)
    (s.hf_dir / "model.safetensors").write_bytes(b"")
    os.utime(ckpt / "model.pt", (time.time() - 60, time.time() - 60))
    assert "kept" in demo.export(s)
    assert len(calls) == 1


def test_phase2_older_than_an_extended_phase1_is_flagged(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path, phase2_steps=40)
    p2 = fake_checkpoint(s.runs / "phase2", 40)
    os.utime(p2 / "model.pt", (time.time() - 60, time.time() - 60))
    monkeypatch.setattr(demo, "run_command", lambda *a, **k: pytest.fail("training was rerun"))
    fake_checkpoint(s.runs / "phase1", 400)  # written after phase 2
    assert "WARNING" in demo.train(s, 2)


def test_a_vocab_larger_than_the_demo_model_is_refused_before_any_work(tmp_path):
    result = run_demo("--data-dir", str(tmp_path / "demo"), "--vocab-size", "100000")
    assert result.returncode == 2
    assert result.stderr.startswith("Error: --vocab-size 100000") and "Traceback" not in result.stderr
    assert not (tmp_path / "demo").exists()
