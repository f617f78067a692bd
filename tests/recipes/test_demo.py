"""`make demo` must not rot: its pipeline part on the shipped sample (quick settings), the whole
demo with few steps and its closing measure, the rerun that skips finished work, the skip
logic of its training and export steps, and the rule that runs the probe only where it can
tell a pretrained model from a random one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import recipes.demo as demo

ROOT = Path(__file__).resolve().parents[2]


def run_demo(*args: str) -> subprocess.CompletedProcess:
    """The command `make demo` runs, from the repo root, as a user would."""
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "recipes.demo", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=300)


@pytest.mark.slow
def test_demo_pipeline_part_on_the_sample_then_rerun_skips(sample_dump, tmp_path):
    quick = ["--only", "pipeline", "--data-dir", str(tmp_path), "--vocab-size", "600", "--workers", "1"]
    first = run_demo(*quick)
    assert first.returncode == 0, first.stderr[-3000:]
    settings = demo.Settings(data_dir=tmp_path, vocab_size=600)
    assert settings.hdf5_dir.name.endswith("_packed")
    files = sorted((settings.hdf5_dir / "huwiki").glob("huwiki_training_*.hdf5"))
    assert files and (settings.hdf5_dir / "manifest.json").is_file()
    assert sorted((settings.hdf5_dir / "huwiki").glob("huwiki_test_*.hdf5"))
    vocab = (settings.vocab_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(vocab) <= 600 and vocab[0] == "[PAD]" and vocab[103] == "[MASK]"
    # the model config the demo trains must fit the default demo vocab
    model = json.loads(demo.MODEL_CONFIG.read_text(encoding="utf-8"))
    assert model["vocab_size"] >= demo.Settings(data_dir=tmp_path).vocab_size
    assert "-> pipeline:" in first.stdout and "artefacts:" in first.stdout

    # the rerun skips: every stage says so (a wall-time bound here failed on a loaded machine)
    again = run_demo(*quick)
    assert again.returncode == 0, again.stderr[-3000:]
    for stage in ("extract", "format", "split", "filter", "vocab", "shard", "encode"):
        assert f"{stage}: already done, nothing rewritten" in again.stderr, stage


@pytest.mark.slow
def test_the_whole_demo_ends_with_the_held_out_measure_and_skips_on_a_rerun(sample_dump, tmp_path):
    """Every step with few training steps: the closing lines are the held-out accuracy against
    the unigram baseline, the probe says why it did not run; a rerun trains nothing again."""
    args = ["--data-dir", str(tmp_path), "--steps", "8", "--workers", "1"]
    first = run_demo(*args)
    assert first.returncode == 0, (first.stdout[-3000:], first.stderr[-3000:])
    out = first.stdout
    assert "--config_file trainer/configs/demo_modern.json" in out and "--no_nsp" not in out
    assert "expected word ranks" in out and "'székhelye' ranks" in out
    assert "-> held-out: held-out MLM accuracy" in out and "unigram baseline" in out
    assert "-> probe: not run: the sample's probe has 15 held-out sentences, under 500" in out
    last = out.strip().splitlines()[-2:]
    assert last[0].startswith("== did it learn? On ") and "of 4 held-out articles" in last[0]
    assert "always guessing the most frequent token" in last[1]
    config = json.loads((tmp_path / "hf_model" / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "modernbert"

    again = run_demo(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "already trained to step 8" in again.stdout and "is newer than ckpt_00000008, kept" in again.stdout
    assert again.stdout.strip().splitlines()[-2:] == last   # the same measure, the same model


def fake_checkpoint(run_dir: Path, step: int) -> Path:
    """A checkpoint as trainer/checkpoint/layout.py lays it out (contents do not matter here)."""
    ckpt = run_dir / "checkpoints" / f"ckpt_{step:08d}"
    ckpt.mkdir(parents=True)
    (ckpt / "model.pt").write_bytes(b"")
    (ckpt / "meta.json").write_text(json.dumps({"step": step, "phase": 1}), encoding="utf-8")
    return ckpt


def test_finished_training_is_not_started_again(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path, steps=300)
    fake_checkpoint(s.run_dir, 100)
    fake_checkpoint(s.run_dir, 300)
    (s.run_dir / "checkpoints" / ".tmp_ckpt_00000400").mkdir()  # half-written: ignored
    assert demo.trained_step(s.run_dir) == 300
    monkeypatch.setattr(demo, "run_command", lambda *a, **k: pytest.fail("training was rerun"))
    assert "already trained to step 300" in demo.train(s)


def test_unfinished_training_resumes_with_torchrun_and_the_modern_recipe(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path, steps=40)
    fake_checkpoint(s.run_dir, 20)
    calls = []
    monkeypatch.setattr(demo, "run_command", lambda cmd, step, env=None: calls.append(cmd))
    demo.train(s)
    (cmd,) = calls
    words = [str(c) for c in cmd]
    assert words[1:5] == ["-m", "trainer.launch", "--standalone", "--nproc_per_node=2"]   # torchrun, quiet on Ctrl-C
    assert "--resume_from_checkpoint" in words
    assert words[words.index("--max_steps") + 1] == "40"
    assert words[words.index("--input_dir") + 1].endswith("_packed")
    recipe = json.loads(demo.TRAIN_CONFIG.read_text(encoding="utf-8"))
    for key, value in (("model_type", "modernbert"), ("no_nsp", True), ("masking", "dynamic"),
                       ("mlm_probability", 0.3), ("mask_replace_prob", 0.8),
                       ("random_replace_prob", 0.1), ("optimizer", "adamw"), ("lr_schedule", "wsd")):
        assert recipe[key] == value, key
    assert recipe["eval_every"] > 0   # the model card has eval numbers


def test_export_is_skipped_when_newer_than_its_checkpoint(tmp_path, monkeypatch):
    s = demo.Settings(data_dir=tmp_path)
    ckpt = fake_checkpoint(s.run_dir, 40)
    calls = []
    monkeypatch.setattr(demo, "run_command", lambda cmd, step, env=None: calls.append(cmd))
    demo.export(s)
    assert len(calls) == 1  # no export yet
    s.hf_dir.mkdir(parents=True)
    (s.hf_dir / "model.safetensors").write_bytes(b"")
    os.utime(ckpt / "model.pt", (time.time() - 60, time.time() - 60))
    assert "kept" in demo.export(s)
    assert len(calls) == 1


def test_the_probe_runs_only_where_its_test_split_can_tell(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(demo, "run_command", lambda cmd, step, env=None: calls.append(cmd))
    monkeypatch.setattr(demo, "probe_summary", lambda path: "probe ran")
    s = demo.Settings(data_dir=tmp_path)
    (s.lang_dir / "probe").mkdir(parents=True)
    manifest = s.lang_dir / "probe" / "manifest.json"
    manifest.write_text(json.dumps({"summary": {"test_sentences": 15}}), encoding="utf-8")
    assert demo.probe(s).startswith("not run: the sample's probe has 15 held-out sentences")
    assert calls == []
    s.probe = "on"
    assert demo.probe(s) == "probe ran" and len(calls) == 1
    s.probe = "auto"
    manifest.write_text(json.dumps({"summary": {"test_sentences": 2000}}), encoding="utf-8")
    assert demo.probe(s) == "probe ran" and len(calls) == 2


def test_a_vocab_larger_than_the_demo_model_is_refused_before_any_work(tmp_path):
    result = run_demo("--data-dir", str(tmp_path / "demo"), "--vocab-size", "100000")
    assert result.returncode == 2
    assert result.stderr.startswith("Error: --vocab-size 100000") and "Traceback" not in result.stderr
    assert not (tmp_path / "demo").exists()
