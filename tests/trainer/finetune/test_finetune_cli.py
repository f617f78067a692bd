"""`python -m trainer.finetune` end to end on small learnable tasks: it learns, writes complete
results over seeds with the random-init baseline, resumes, follows a run's checkpoints, and
answers bad input with one line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.finetune_data import (
    make_model_dir,
    tagged_sentences,
    write_classification_jsonl,
    write_conll,
    write_squad,
)
from trainer.finetune.__main__ import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("finetune")
    run = make_model_dir(root)
    write_conll(root / "train.conll", tagged_sentences(300, 1))
    write_conll(root / "dev.conll", tagged_sentences(60, 2))
    write_conll(root / "test.conll", tagged_sentences(60, 3))
    write_classification_jsonl(root / "train.jsonl", 300, 1)
    write_classification_jsonl(root / "dev.jsonl", 80, 2)
    write_squad(root / "train.json", 300, 1)
    write_squad(root / "dev.json", 60, 2)
    return {"root": root, "run": run, "hf": root / "hf"}


def run_cli(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "trainer.finetune", *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_ner_learns_and_beats_random_init_over_seeds(files, tmp_path):
    out = tmp_path / "ner"
    r = run_cli("--model", files["hf"], "--task", "ner", "--train_file", files["root"] / "train.conll",
                "--validation_file", files["root"] / "dev.conll", "--test_file",
                files["root"] / "test.conll", "--output_dir", out, "--seeds", "1,2",
                "--baseline", "random-init", "--learning_rate", "2e-3", "--epochs", "4")
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["task"] == "ner" and res["metric"] == "entity_f1"
    assert res["evaluated_on"] == "test"
    for variant in ("pretrained", "random_init"):
        assert len(res[variant]["scores"]) == 2 and res[variant]["seeds"] == [1, 2]
        assert res[variant]["sd"] >= 0
    # The synthetic task is learnable from scratch: both reach high entity F1.
    assert res["pretrained"]["mean"] > 0.9, res["pretrained"]
    assert res["random_init"]["mean"] > 0.9, res["random_init"]
    assert "ner entity_f1 on test (60 examples, 2 seeds" in r.stdout
    preds = (out / "predictions" / "pretrained_seed1.conll").read_text().split("\n\n")
    assert len([p for p in preds if p.strip()]) == 60
    assert not list(out.rglob(".tmp_*")) and not list(out.rglob("*.tmp"))


@pytest.mark.slow
def test_a_rerun_reuses_finished_seeds_and_other_settings_start_over(files, tmp_path):
    args = ["--model", files["run"], "--task", "ner", "--train_file", files["root"] / "train.conll",
            "--validation_file", files["root"] / "dev.conll", "--output_dir", tmp_path,
            "--epochs", "1", "--seeds", "3"]
    assert main(list(map(str, args))) == 0
    record = tmp_path / "runs" / "pretrained_seed3.json"
    first = record.stat().st_mtime_ns
    assert main(list(map(str, args))) == 0
    assert record.stat().st_mtime_ns == first                      # reused, not retrained
    assert main(list(map(str, args + ["--learning_rate", "1e-4"]))) == 0
    assert record.stat().st_mtime_ns != first                      # other settings: retrained
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["evaluated_on"] == "validation" and res["settings"]["learning_rate"] == 1e-4


@pytest.mark.slow
def test_a_learning_rate_grid_is_chosen_per_variant_on_validation(files, tmp_path):
    """--learning_rate 1e-6,2e-3: each rate with the first seed, the best validation score
    wins for every seed of that variant; 1e-6 cannot learn the task in 2 epochs."""
    args = ["--model", files["run"], "--task", "ner", "--train_file", files["root"] / "train.conll",
            "--validation_file", files["root"] / "dev.conll", "--output_dir", tmp_path,
            "--epochs", "2", "--seeds", "1,2", "--learning_rate", "1e-6,2e-3",
            "--baseline", "random-init"]
    assert main(list(map(str, args))) == 0
    res = json.loads((tmp_path / "results.json").read_text())
    for variant in ("pretrained", "random_init"):
        pick = res["learning_rate_selection"][variant]
        assert pick["learning_rate"] == 2e-3, pick
        assert pick["validation_by_rate"]["0.002"] > pick["validation_by_rate"]["1e-06"]
    assert res["settings"]["learning_rate"] == [1e-6, 2e-3]
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs == ["pretrained_lr0.002_seed1.json", "pretrained_lr0.002_seed2.json",
                    "pretrained_lr1e-06_seed1.json", "random_init_lr0.002_seed1.json",
                    "random_init_lr0.002_seed2.json", "random_init_lr1e-06_seed1.json"]
    with pytest.raises(SystemExit):
        main(list(map(str, args[:-4] + ["--learning_rate", "1e-3,x"])))


@pytest.mark.slow
def test_classification_from_jsonl_with_a_named_text_column(files, tmp_path):
    r = run_cli("--model", files["hf"], "--task", "classify", "--train_file", files["root"] / "train.jsonl",
                "--validation_file", files["root"] / "dev.jsonl", "--text_column", "sentence",
                "--output_dir", tmp_path, "--learning_rate", "2e-3", "--epochs", "6")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["metric"] == "accuracy"
    assert res["pretrained"]["all"][0]["test"]["macro_f1"] > 0.7
    assert res["pretrained"]["mean"] > 0.75


@pytest.mark.slow
def test_question_answering_finds_the_span(files, tmp_path):
    r = run_cli("--model", files["hf"], "--task", "qa", "--train_file", files["root"] / "train.json",
                "--validation_file", files["root"] / "dev.json", "--output_dir", tmp_path,
                "--learning_rate", "2e-3", "--epochs", "8", "--max_seq_length", "64",
                "--language", "en")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["metric"] == "f1" and res["answer_normalizer"] == "squad"
    assert res["pretrained"]["mean"] > 60, res["pretrained"]
    answers = json.loads((tmp_path / "predictions" / "pretrained_seed1.json").read_text())
    assert len(answers) == 60


@pytest.mark.slow
def test_run_mode_fine_tunes_every_nth_checkpoint(files, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(files["run"], run)
    src = run / "checkpoints" / "ckpt_00000010"
    for step in (20, 30):
        shutil.copytree(src, run / "checkpoints" / f"ckpt_{step:08d}")
    out = tmp_path / "out"
    args = ["--run", run, "--every", "2", "--task", "ner", "--train_file",
            files["root"] / "train.conll", "--validation_file", files["root"] / "dev.conll",
            "--output_dir", out, "--epochs", "1", "--baseline", "random-init"]
    assert main(list(map(str, args))) == 0
    res = json.loads((out / "results.json").read_text())
    assert [c["step"] for c in res["checkpoints"]] == [20, 30]      # the 2nd, and the newest
    assert res["pretrained"]["mean"] == res["checkpoints"][-1]["mean"]
    assert "random_init" in res and res["run"] == str(run)


@pytest.mark.parametrize("content, expected", [
    ("w1 B-ENT\nw2\n", "train.conll:2"),
    ("w1 B-ENT\nw2 O\n\nWORD NOT_A_TAG\nw3 O\n", "train.conll:4: tag 'NOT_A_TAG'"),
])
def test_bad_input_is_one_error_line(files, tmp_path, content, expected):
    bad = tmp_path / "train.conll"
    bad.write_text(content, encoding="utf-8")
    r = run_cli("--model", files["hf"], "--task", "ner", "--train_file", bad,
                "--validation_file", files["root"] / "dev.conll", "--output_dir", tmp_path / "o")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and expected in lines[0], r.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_a_missing_probe_and_a_missing_model_say_what_to_do(files, tmp_path):
    r = run_cli("--model", files["hf"], "--probe", tmp_path / "xx", "--output_dir", tmp_path / "o")
    assert r.returncode == 1 and "pipeline --data-dir" in r.stderr and "probe` first" in r.stderr
    r = run_cli("--model", tmp_path / "nope", "--task", "ner", "--train_file",
                files["root"] / "train.conll", "--validation_file", files["root"] / "dev.conll",
                "--output_dir", tmp_path / "o")
    assert r.returncode == 1 and r.stderr.startswith("Error: --model") and "does not exist" in r.stderr


def test_a_dev_label_never_seen_in_training_is_a_counted_note(files, tmp_path, caplog):
    from tests.helpers.finetune_data import tagged_sentences

    dev = tagged_sentences(20, 9)
    dev[0][0] = (dev[0][0][0], "B-NEW")
    write_conll(tmp_path / "dev.conll", dev)
    args = ["--model", files["hf"], "--task", "ner", "--train_file", files["root"] / "train.conll",
            "--validation_file", tmp_path / "dev.conll", "--output_dir", tmp_path / "o",
            "--epochs", "1"]
    assert main(list(map(str, args))) == 0
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert any("1 label of 1 kind never seen in training (B-NEW)" in n for n in res["notes"])


@pytest.mark.slow
def test_cross_lingual_transfer_tests_on_another_languages_probe(files, tmp_path):
    """--probe A --test_probe B: fine-tuned on A's probe, scored on B's test split only."""
    from tests.helpers.finetune_data import tagged_sentences

    for lang, seed in (("aa", 11), ("bb", 21)):
        probe = tmp_path / "data" / lang / "probe"
        probe.mkdir(parents=True)
        for name, n, s in (("train", 120, seed), ("dev", 30, seed + 1), ("test", 25 if lang == "bb" else 40, seed + 2)):
            write_conll(probe / f"{name}.conll", tagged_sentences(n, s))
    out = tmp_path / "transfer"
    r = run_cli("--model", files["hf"], "--probe", tmp_path / "data" / "aa", "--test_probe",
                tmp_path / "data" / "bb", "--output_dir", out, "--seeds", "1", "--epochs", "1",
                "--learning_rate", "2e-3")
    assert r.returncode == 0, r.stderr
    assert "test (25 examples" in r.stdout   # bb's test split, not aa's 40
    preds = (out / "predictions" / "pretrained_seed1.conll").read_text().split("\n\n")
    assert len([p for p in preds if p.strip()]) == 25
    r = run_cli("--model", files["hf"], "--task", "ner", "--train_file", files["root"] / "train.conll",
                "--validation_file", files["root"] / "dev.conll", "--test_probe", tmp_path / "data" / "bb",
                "--output_dir", tmp_path / "o")
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith(
        "Error: --test_probe goes with --probe (train on one probe, test on another's)"), r.stderr
