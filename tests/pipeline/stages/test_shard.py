"""`pipeline shard`: whole documents, balanced training shards, held-out test shards, the
stage contract (determinism, resume, --force)."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages import shard as sharding
from pipeline.stages.shard import shard
from pipeline.text import held_out, largest_first
from pipeline.text.documents import documents


def make_corpus(folder: Path, n_files=5, docs_per_file=40, seed=0) -> list[str]:
    """Filtered-style files with documents of varied size; returns the documents."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    all_docs = []
    for f in range(n_files):
        docs = []
        for d in range(docs_per_file):
            n = rng.choice([1, 2, 3, 5, 8, 20])
            docs.append("\n".join(f"Dokumentum {f}-{d}, mondat {k}: {'szó ' * rng.randint(3, 30)}vége."
                                  for k in range(n)))
        (folder / f"AA_wiki_{f:02d}.txt").write_text("\n\n".join(docs) + "\n", encoding="utf-8")
        all_docs += docs
    (folder / "manifest.json").write_text('{"stage": "filter"}')
    return all_docs


def shard_docs(folder: Path, pattern: str) -> list[str]:
    return ["\n".join(d) for p in sorted(folder.glob(pattern))
            for d in documents(p.read_text(encoding="utf-8"))]


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.txt"))}


@pytest.fixture
def corpus(tmp_path):
    data = tmp_path / "data"
    docs = make_corpus(data / "hu" / "filtered")
    return data, docs


def test_every_document_lands_whole_in_exactly_one_balanced_shard(corpus):
    data, docs = corpus
    summary = shard(data_dir=data, lang="hu", workers=1, num_shards=6, test_fraction=0.05)
    out = data / "hu" / "sharded"
    names = sorted(p.name for p in out.glob("*.txt"))
    assert names == sorted([f"huwiki_training_{i}.txt" for i in range(6)] + ["huwiki_test_0.txt"])
    train, test = shard_docs(out, "huwiki_training_*.txt"), shard_docs(out, "huwiki_test_*.txt")
    assert Counter(train + test) == Counter(docs)
    assert 1 <= len(test) <= 25 and summary["test_documents"] == len(test)
    sizes = [p.stat().st_size for p in out.glob("huwiki_training_*.txt")]
    largest_doc = max(len(d.encode()) for d in docs) + 2
    assert max(sizes) - min(sizes) <= largest_doc
    manifest = json.loads((out / "manifest.json").read_text())
    assert sum(s["documents"] for s in manifest["shards"]) == len(docs)
    assert summary["sentences"] == sum(d.count("\n") + 1 for d in docs)
    for s in manifest["shards"]:
        text = (out / s["file"]).read_text(encoding="utf-8")
        assert text.endswith("\n") and "\n\n\n" not in text and s["bytes"] == len(text.encode())


def test_held_out_documents_depend_on_text_and_seed_only(tmp_path):
    docs = make_corpus(tmp_path / "a", n_files=2, docs_per_file=100)
    shard(lang="hu", workers=1, input=tmp_path / "a", output=tmp_path / "o1", num_shards=3, test_fraction=0.1)
    # the same documents in other files and order: the same documents held out
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.txt").write_text("\n\n".join(reversed(docs)) + "\n", encoding="utf-8")
    shard(lang="hu", workers=1, input=tmp_path / "b", output=tmp_path / "o2", num_shards=5, test_fraction=0.1)
    t1, t2 = shard_docs(tmp_path / "o1", "*test_*.txt"), shard_docs(tmp_path / "o2", "*test_*.txt")
    assert sorted(t1) == sorted(t2) and 5 <= len(t1) <= 40
    shard(lang="hu", workers=1, input=tmp_path / "a", output=tmp_path / "o3", num_shards=3,
          test_fraction=0.1, seed=7)
    assert sorted(shard_docs(tmp_path / "o3", "*test_*.txt")) != sorted(t1)


def test_a_test_shard_exists_even_when_the_fraction_rounds_to_nothing(tmp_path):
    make_corpus(tmp_path / "in", n_files=1, docs_per_file=10)
    summary = shard(lang="uk", workers=1, input=tmp_path / "in", output=tmp_path / "o", test_fraction=0.001)
    assert summary["test_documents"] == 1 and (tmp_path / "o" / "ukwiki_test_0.txt").is_file()
    # more shards asked than documents: one document per shard, none empty
    assert summary["training_shards"] == 9
    assert all(p.stat().st_size > 0 for p in (tmp_path / "o").glob("*.txt"))
    none = shard(lang="uk", workers=1, input=tmp_path / "in", output=tmp_path / "o0", test_fraction=0)
    assert none["test_shards"] == 0 and not list((tmp_path / "o0").glob("*test*"))


def test_workers_1_and_2_give_identical_bytes(corpus, tmp_path):
    data, _ = corpus
    src = data / "hu" / "filtered"
    shard(lang="hu", workers=1, input=src, output=tmp_path / "w1", num_shards=4)
    shard(lang="hu", workers=2, input=src, output=tmp_path / "w2", num_shards=4)
    assert outputs(tmp_path / "w1") == outputs(tmp_path / "w2")


def test_cli_rerun_resume_and_force(corpus, tmp_path, monkeypatch):
    data, _ = corpus
    runner = CliRunner()
    args = ["--data-dir", str(data), "--lang", "hu", "--workers", "1", "shard", "--num-shards", "3"]
    res = runner.invoke(cli, args)
    assert res.exit_code == 0, res.output
    out = data / "hu" / "sharded"
    clean = outputs(out)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    res = runner.invoke(cli, args)
    assert "already done, nothing rewritten" in res.output
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == mtimes

    res = runner.invoke(cli, args[:-1] + ["5"])
    assert res.exit_code == 1 and "num_shards: 3 -> 5" in res.output and "--force" in res.output
    assert runner.invoke(cli, args[:-1] + ["5", "--force"]).exit_code == 0
    assert len(list(out.glob("huwiki_training_*.txt"))) == 5

    # killed while writing: no shard renamed, no manifest; the rerun gives the clean bytes
    other = tmp_path / "o"
    real = sharding._ShardWriter.add
    calls = []

    def dies(self, *a):
        calls.append(1)
        if len(calls) == 50:
            raise KeyboardInterrupt
        return real(self, *a)

    monkeypatch.setattr(sharding._ShardWriter, "add", dies)
    with pytest.raises(KeyboardInterrupt):
        shard(lang="hu", workers=1, input=data / "hu" / "filtered", output=other, num_shards=3)
    assert not list(other.glob("*.txt")) and not (other / "manifest.json").exists()
    monkeypatch.setattr(sharding._ShardWriter, "add", real)
    shard(lang="hu", workers=1, input=data / "hu" / "filtered", output=other, num_shards=3)
    assert outputs(other) == clean


def test_bad_options_and_inputs_give_one_clear_line(tmp_path):
    runner = CliRunner()
    res = runner.invoke(cli, ["--data-dir", str(tmp_path), "shard"])
    assert res.exit_code == 1 and "pipeline filter" in res.output
    res = runner.invoke(cli, ["--data-dir", str(tmp_path), "shard", "--test-fraction", "1.5"])
    assert res.exit_code == 2 and "--test-fraction" in res.output
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_bytes(b"ok\n\n\xc3\x28 bad\n")
    res = runner.invoke(cli, ["shard", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "o")])
    assert res.exit_code == 1 and "not UTF-8" in res.output and "Traceback" not in res.output


def test_the_held_out_floor_adds_documents_up_to_its_cap(tmp_path):
    docs = make_corpus(tmp_path / "in", n_files=2, docs_per_file=100)   # 200 documents
    sentences = {d: d.count("\n") + 1 for d in docs}
    exact = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "exact",
                  test_fraction=0.01, min_test_sentences=0)
    floor = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "floor",
                  test_fraction=0.01, min_test_sentences=60)
    held = shard_docs(tmp_path / "floor", "*test_*.txt")
    # the floor keeps the fraction's documents and adds others until 60 sentences are held out
    assert set(shard_docs(tmp_path / "exact", "*test_*.txt")) <= set(held)
    assert floor["test_sentences"] == sum(sentences[d] for d in held) >= 60
    assert floor["test_sentences"] - max(sentences[d] for d in held) < 60
    assert exact["test_documents"] < floor["test_documents"]
    # an unreachable floor stops at MAX_TEST_SHARE of the documents
    capped = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "capped",
                   test_fraction=0.01, min_test_sentences=10**6)
    assert capped["test_documents"] == int(sharding.MAX_TEST_SHARE * 200)
    assert capped["training_documents"] == 180


def test_too_few_candidates_are_scanned_for_again(tmp_path, monkeypatch):
    make_corpus(tmp_path / "in", n_files=2, docs_per_file=100)
    wide = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "wide",
                 test_fraction=0.01, min_test_sentences=10**6)
    monkeypatch.setattr(sharding, "CANDIDATE_SHARE", 1e-6)   # pass 1 keeps no candidate
    narrow = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "narrow",
                   test_fraction=0.01, min_test_sentences=10**6)
    assert narrow["test_documents"] == 20        # the cap is still reached, with the same documents
    assert outputs(tmp_path / "narrow") == outputs(tmp_path / "wide") and wide["test_documents"] == 20


def test_every_source_holds_out_documents_and_its_bytes_are_counted(tmp_path):
    """A small web slice beside a large Wikipedia draws no test document by hash: it gets its
    smallest hash's, so that every source's text is held out (and trains no copy of it)."""
    docs = make_corpus(tmp_path / "in", n_files=4, docs_per_file=100)
    web = [f"Webes oldal {i}, rövid szöveg.\nMásodik mondata {i}." for i in range(6)]
    (tmp_path / "in" / "web__part_0000.txt").write_text("\n\n".join(web) + "\n", encoding="utf-8")
    summary = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "o",
                    test_fraction=0.01, min_test_sentences=0, weights={"web": 2.0})
    per = summary["sources"]
    assert per["web"]["test_documents"] == 1 and per["wikipedia"]["test_documents"] >= 1
    test = shard_docs(tmp_path / "o", "*test_*.txt")
    assert len([d for d in test if d.startswith("Webes")]) == 1
    assert per["web"]["training_documents"] == 2 * 5 and per["wikipedia"]["training_documents"] == (
        len(docs) - per["wikipedia"]["test_documents"])
    # the bytes of each source in the shards (copies included): what encode splits its tokens by
    for split in ("training", "test"):   # each document and its newline; a blank line between two
        files = list((tmp_path / "o").glob(f"huwiki_{split}_*.txt"))
        blank = sum(s[f"{split}_documents"] for s in per.values()) - len(files)
        assert sum(s[f"{split}_bytes"] for s in per.values()) + blank == sum(p.stat().st_size for p in files)
    web_test = next(d for d in test if d.startswith("Webes"))
    assert per["web"]["test_bytes"] == len(web_test.encode()) + 1


def test_a_small_corpus_holds_out_enough_for_the_probe(tmp_path):
    """Issue 60: a 2.5 MB dump held out 10% of its documents, too few sentences for the probe's
    500 test sentences, and make pretrain ended without a task score. Where 10% holds fewer than
    PROBE_HELD_OUT sentences and 25% holds that many, the floor goes up to 25%."""
    docs = make_corpus(tmp_path / "in", n_files=2, docs_per_file=800)   # 1,600 documents
    total = sum(d.count("\n") + 1 for d in docs)
    assert held_out.MAX_TEST_SHARE * total < held_out.PROBE_HELD_OUT <= held_out.SMALL_TEST_SHARE * total
    out = shard(lang="hu", workers=1, input=tmp_path / "in", output=tmp_path / "o", test_fraction=0.01)
    assert out["test_sentences"] >= sharding.MIN_TEST_SENTENCES > held_out.PROBE_HELD_OUT
    assert int(sharding.MAX_TEST_SHARE * 1600) < out["test_documents"] <= int(held_out.SMALL_TEST_SHARE * 1600)
    # the cap: 10% for a corpus too small for any share to give the probe its sentences, or large enough
    assert held_out.test_share_cap(801, 2500) == held_out.test_share_cap(30_000, 2500) == sharding.MAX_TEST_SHARE
    assert held_out.test_share_cap(18_048, 2500) == held_out.SMALL_TEST_SHARE   # uk's dump
    assert held_out.test_share_cap(18_048, 500) == sharding.MAX_TEST_SHARE      # a floor of 500: 10% holds it


def test_sharding_a_large_file_takes_the_memory_of_a_document_not_of_the_file(tmp_path):
    """Both passes read a file a line at a time: a 64 MB web part was held whole, several times over."""
    src = tmp_path / "in"
    src.mkdir()
    with open(src / "web__big.txt", "w", encoding="utf-8") as fh:
        for i in range(1_000_000):
            if fh.tell() > 40_000_000:
                break
            fh.write(f"Документ {i} починається реченням про щось.\n" + "Ще одне речення тексту, досить довге. " * 20
                     + "\n\n")
    docs, grown_mb = shard_peak_growth(src, tmp_path / "out")
    assert docs > 25_000
    assert grown_mb < 40, f"shard of a 40 MB file grew by {grown_mb:.0f} MB"


def shard_peak_growth(src: Path, out: Path, chunk_units: int | None = None) -> tuple[int, float]:
    """shard in a fresh process (workers=1: pass 1 in it too): its documents, and its peak memory
    over its start in MB; `chunk_units`: the plan's chunk (pipeline/text/largest_first.py)."""
    code = ("import resource; from pipeline.text import largest_first; from pipeline.stages.shard import shard; "
            f"largest_first.CHUNK_UNITS = {chunk_units or largest_first.CHUNK_UNITS}; "
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            f"s = shard(lang='uk', workers=1, input={str(src)!r}, output={str(out)!r}); "
            "print(s['documents'], (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1e3)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3])
    docs, grown_mb = res.stdout.split()[-2:]
    return int(docs), float(grown_mb)


def test_a_plan_in_small_chunks_writes_the_same_shards(corpus, tmp_path, monkeypatch):
    """The plan sorts and places CHUNK_UNITS units at a time on disk: any chunk, the same bytes."""
    data, _ = corpus
    src = data / "hu" / "filtered"
    whole = shard(lang="hu", workers=1, input=src, output=tmp_path / "whole", test_fraction=0.1, num_shards=5,
                  weights={"wikipedia": 2.5})
    monkeypatch.setattr(largest_first, "CHUNK_UNITS", 3)
    small = shard(lang="hu", workers=2, input=src, output=tmp_path / "small", test_fraction=0.1, num_shards=5,
                  weights={"wikipedia": 2.5})
    assert outputs(tmp_path / "small") == outputs(tmp_path / "whole")
    assert {k: v for k, v in small.items() if k != "seconds"} == {k: v for k, v in whole.items() if k != "seconds"}
    assert not list((tmp_path / "small").rglob("*.npz")) and not list((tmp_path / "small").rglob("*.bin"))


def _peak_growth_mb(tmp_path: Path, documents: int) -> float:
    """The stage's peak memory over its start, on `documents` one-line documents in files of 20,000."""
    src = tmp_path / f"in{documents}"
    src.mkdir()
    for f in range(0, documents, 20_000):
        text = "".join(f"Rövid dokumentum {i} szövege{'.' * (i % 50)}\n\n" for i in range(f, f + 20_000))
        (src / f"web__part_{f:08d}.txt").write_text(text, encoding="utf-8")
    docs, grown_mb = shard_peak_growth(src, tmp_path / f"out{documents}", chunk_units=20_000)
    assert docs == documents
    return grown_mb


@pytest.mark.slow
def test_the_plan_does_not_grow_with_the_documents(tmp_path):
    """Issue 62: the plan held about 110 bytes a document (sizes, copies, unit arrays, a Python
    list of the order, the floor's candidates): 344 MB at 2.6M documents. Now it is planned on
    disk, a chunk at a time: ten times the documents, the same memory."""
    small, large = _peak_growth_mb(tmp_path, 40_000), _peak_growth_mb(tmp_path, 400_000)
    assert large - small < 12, f"40,000 documents: {small:.0f} MB, 400,000: {large:.0f} MB"
