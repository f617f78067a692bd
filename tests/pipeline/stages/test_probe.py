"""`pipeline probe` on the shipped sample: CoNLL files of linked mentions, dev and test from the
held-out articles only, the sentences exactly lines of the shards, the stage contract
(determinism for any --workers, rerun skipped, changed options refused), one-line errors."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.extract import extract
from pipeline.stages.filter import filter_documents
from pipeline.stages.format import format_corpus
from pipeline.stages.probe import SPLITS, first_share, probe_corpus
from pipeline.stages.shard import shard
from pipeline.stages.split import split
from pipeline.text.documents import documents
from tests.helpers.kill_at_rename import KILL_AT_NTH_RENAME

TAGS = {"O", "B-LINK", "I-LINK"}


@pytest.fixture(scope="module")
def corpus(sample_dump, tmp_path_factory) -> Path:
    """DATA_DIR with hu/ made by the stages up to shard (several extracted files)."""
    data = tmp_path_factory.mktemp("data")
    extract(data_dir=data, lang="hu", input=sample_dump, workers=1, task_mb=0.03)
    format_corpus(data_dir=data, lang="hu", workers=1)
    split(data_dir=data, lang="hu", workers=1)
    filter_documents(data_dir=data, lang="hu", workers=1)
    shard(data_dir=data, lang="hu", workers=1, num_shards=4)
    return data


@pytest.fixture
def data(corpus, tmp_path) -> Path:
    """A copy of the corpus that a test may change."""
    shutil.copytree(corpus, tmp_path / "data")
    return tmp_path / "data"


def read_conll(path: Path) -> list[list[tuple[str, str]]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n\n")
    sentences, current = [], []
    for line in text.split("\n")[:-1]:
        if not line:
            assert current, "an empty sentence"
            sentences.append(current)
            current = []
            continue
        word, tag = line.split("\t")
        assert word and not any(c.isspace() for c in word) and tag in TAGS, line
        current.append((word, tag))
    assert not current
    return sentences


def shard_docs(folder: Path, pattern: str) -> list[list[str]]:
    return [d for p in sorted(folder.glob(pattern)) for d in documents(p.read_text(encoding="utf-8"))]


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".conll"}


def test_probe_of_the_sample(corpus, tmp_path):
    out = tmp_path / "probe"
    summary = probe_corpus(data_dir=corpus, lang="hu", workers=1, output=out)
    probe = {s: read_conll(out / f"{s}.conll") for s in SPLITS}
    sharded = corpus / "hu" / "sharded"
    train_docs, test_docs = shard_docs(sharded, "huwiki_training_*.txt"), shard_docs(sharded, "huwiki_test_*.txt")
    lines = {"train": {s for d in train_docs for s in d}, "test": {s for d in test_docs for s in d}}
    doc_of = {s: i for i, d in enumerate(test_docs) for s in d}
    held_docs = {}
    for split_name, sentences in probe.items():
        assert len(sentences) == summary[f"{split_name}_sentences"] > 0
        for sentence in sentences:
            words, tags = [w for w, _ in sentence], [t for _, t in sentence]
            assert "B-LINK" in tags and len(words) <= 128
            assert all(b != "I-LINK" or a != "O" for a, b in zip(["O"] + tags, tags)), sentence
            text = " ".join(words)
            assert not any(0xE000 <= ord(c) <= 0xF8FF for c in text)
            # byte for byte a line of the shards: of the training shards for train, else the test ones
            assert text in lines["train" if split_name == "train" else "test"], text
            if split_name != "train":
                held_docs.setdefault(split_name, set()).add(doc_of[text])
        assert len({" ".join(w for w, _ in s) for s in sentences}) == len(sentences)
        assert summary["mentions"][split_name] == sum(t == "B-LINK" for s in sentences for _, t in s)
        assert summary["tokens"][split_name] == sum(len(s) for s in sentences)
    assert not held_docs["dev"] & held_docs["test"]   # an article is in dev or in test, never both
    manifest = json.loads((out / "manifest.json").read_text())
    assert [o["path"] for o in manifest["outputs"]] == ["train.conll", "dev.conll", "test.conll"]
    # a 40-article sample: fewer sentences than asked, said so, never refused
    assert len(manifest["warnings"]) == 3 and "only" in manifest["warnings"][1]
    assert summary["articles_read"] == 41 and summary["rounds"] == 1
    assert summary["dropped_sentences"]["no_mention"] > 0 and summary["propagated_mentions"]["train"] > 0
    assert not (out / ".stage").exists()


def test_the_same_bytes_for_any_workers_and_a_rerun_is_skipped(corpus, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    first = probe_corpus(data_dir=corpus, lang="hu", workers=1, output=a)
    probe_corpus(data_dir=corpus, lang="hu", workers=2, output=b)
    assert outputs(a) == outputs(b) and len(outputs(a)) == 3
    stamps = {p.name: p.stat().st_mtime_ns for p in a.iterdir()}
    assert probe_corpus(data_dir=corpus, lang="hu", workers=2, output=a) == first
    assert {p.name: p.stat().st_mtime_ns for p in a.iterdir()} == stamps
    with pytest.raises(StageError, match="--force"):
        probe_corpus(data_dir=corpus, lang="hu", workers=1, output=a, seed=7)
    other = probe_corpus(data_dir=corpus, lang="hu", workers=1, output=a, seed=7, force=True)
    assert other["train_sentences"] == first["train_sentences"]   # all there is, in another order
    assert outputs(a)["train.conll"] != outputs(b)["train.conll"]


def test_sizes_are_kept_and_a_share_of_the_articles_is_read_first(corpus, tmp_path):
    summary = probe_corpus(data_dir=corpus, lang="hu", workers=1, output=tmp_path / "p",
                           train_sentences=30, dev_sentences=5, test_sentences=5)
    assert (summary["train_sentences"], summary["dev_sentences"], summary["test_sentences"]) == (30, 5, 5)
    assert summary["article_share_read"] < 1 and summary["articles_read"] < 41
    assert len(read_conll(tmp_path / "p" / "train.conll")) == 30
    assert first_share({"train": 100, "dev": 10, "test": 10},
                       {"sentences": 100_000, "test_sentences": 1_000}) == pytest.approx(0.08)


def test_the_cli_writes_data_dir_lang_probe(data):
    args = ["--data-dir", str(data), "--lang", "hu", "--workers", "1", "probe", "--train-sentences", "50"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (data / "hu" / "probe").iterdir()) == [
        "dev.conll", "manifest.json", "test.conll", "train.conll"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and "already done" in res.output


def test_no_shards_yet_is_one_error_line(data):
    shutil.rmtree(data / "hu" / "sharded")
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "probe"])
    assert res.exit_code == 1 and res.output.startswith("Error: ")
    assert len(res.output.strip().splitlines()) == 1 and "pipeline --lang hu shard" in res.output
    assert not (data / "hu" / "probe").exists()


def test_extract_output_without_links_is_one_error_line(data):
    manifest_path = data / "hu" / "extracted" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["rules"] = {"rules_version": 2}
    manifest_path.write_text(json.dumps(manifest))
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "probe"])
    assert res.exit_code == 1 and res.output.startswith("Error: ")
    assert len(res.output.strip().splitlines()) == 1 and "extract" in res.output


def test_a_corpus_without_mentions_is_refused(data):
    for path in sorted((data / "hu" / "extracted").glob("*/wiki_*")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("".join(json.dumps({**r, "title": "Zzz", "links": []}, ensure_ascii=False) + "\n"
                                for r in records), encoding="utf-8")
    with pytest.raises(StageError, match="no sentence"):
        probe_corpus(data_dir=data, lang="hu", workers=1)

@pytest.mark.faults   # the kill -9 cell of docs/reliability.md's matrix
def test_kill_9_mid_stage_then_rerun_gives_the_same_bytes(data, tmp_path):
    root = Path(__file__).resolve().parents[3]
    clean = probe_corpus(data_dir=data, lang="hu", workers=1, output=tmp_path / "clean")
    # renames: run.json, the test shards' hashes, then a work file and a marker per task: die
    # at the second task's work file
    cmd = [sys.executable, "-c", KILL_AT_NTH_RENAME, "5", "--data-dir", str(data), "--lang", "hu",
           "--workers", "1", "probe"]
    res = subprocess.run(cmd, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=120)
    out = data / "hu" / "probe"
    assert res.returncode == -9, res.stderr
    assert not (out / "manifest.json").exists() and list(out.rglob(".*.tmp"))
    resumed = probe_corpus(data_dir=data, lang="hu", workers=1)
    resumed.pop("seconds"), clean.pop("seconds")
    assert resumed == clean
    assert outputs(out) == outputs(tmp_path / "clean")
    assert not list(out.rglob(".*.tmp")) and not (out / ".stage").exists()


def test_without_held_out_articles_train_alone_with_a_warning(data):
    shard(data_dir=data, lang="hu", workers=1, num_shards=4, test_fraction=0, force=True)
    summary = probe_corpus(data_dir=data, lang="hu", workers=1)
    assert summary["train_sentences"] > 0 and summary["dev_sentences"] == summary["test_sentences"] == 0
    assert (data / "hu" / "probe" / "test.conll").read_text() == "" and summary["rounds"] == 1
    warnings = json.loads((data / "hu" / "probe" / "manifest.json").read_text())["warnings"]
    assert any("--test-fraction" in w for w in warnings)
