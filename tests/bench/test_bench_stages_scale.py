"""bench/bench_stages_scale.py and its parts: the one-language documents of synthetic_web.py go
through the real stages as prose of their language (kept by the filter, planted copies found by
dedup), the process-tree memory of process_tree.py counts a grandchild's memory, and the bench
runs every stage from ingest to encode on a small corpus."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import unicodedata

import pytest

from tests.helpers.script_module import ROOT, load_script

synthetic_web = load_script("bench/synthetic_web.py")
process_tree = load_script("bench/process_tree.py")
SAMPLE = ROOT / "data/sample/huwiki-sample.xml.bz2"


@pytest.fixture(scope="module")
def words(tmp_path_factory):
    return synthetic_web.dump_words(SAMPLE, tmp_path_factory.mktemp("words"))


def test_one_language_documents_are_sentences_of_the_dumps_words(tmp_path, words):
    synthetic_web.write_web_corpus(tmp_path, 300, seed=1, workers=1, words=words)
    docs = [d.split("\n") for d in (tmp_path / "web_0000.txt").read_text(encoding="utf-8").split("\n\n")]
    assert len(docs) == 300 and len(words) > 1000
    known = set(words)
    for doc in docs[:50]:
        assert not doc[0].endswith(".")                       # a title
        for para in doc[1:]:
            assert para.endswith(".") and para[0].isupper()
            assert {w.strip(".,") for w in para.split()} <= {*known, *(w[:1].upper() + w[1:] for w in known)}
    scripts = {unicodedata.name(c).split()[0] for d in docs for p in d for c in p if c.isalpha()}
    assert scripts == {"LATIN"}                               # Hungarian: one script, not eight


def test_eight_scripts_documents_stay_as_they_were(tmp_path):
    """The dedup bench's corpora (figures in bench/README.md) are those of before the one-language
    mode: the digest of the file the earlier generator wrote."""
    synthetic_web.write_web_corpus(tmp_path, 40, seed=0, workers=1)
    digest = hashlib.sha256((tmp_path / "web_0000.txt").read_bytes()).hexdigest()
    assert digest == "5750a6c99758ad15d741de547a66acd1e1df55ae8aec3f067120fdad749d8c16"


def test_one_language_corpus_passes_the_filter_and_dedup_finds_its_copies(tmp_path, words):
    from pipeline.stages.dedup import dedup
    from pipeline.stages.filter import filter_documents
    from pipeline.stages.ingest import ingest
    from pipeline.stages.split import split

    bench_dedup_scale = load_script("bench/bench_dedup_scale.py")
    truth = synthetic_web.write_web_corpus(tmp_path / "raw", 3000, seed=2, workers=1, words=words)
    data = tmp_path / "data"
    common = {"data_dir": data, "lang": "hu", "workers": 1}
    ingest(**common, sources=[f"web={tmp_path / 'raw'}/"])
    dedup(**common, wikipedia=False)
    found = bench_dedup_scale.found(data / "hu/deduped", truth)
    assert found["exact"] == 1.0 and found["near"] > 0.95 and found["new_lost"] == 0
    split(**common)
    filter_documents(**common)
    kept = json.loads((data / "hu/filtered/rejections.json").read_text())
    assert kept["kept"] > 0.95 * kept["documents"], kept["reasons"]


def test_process_tree_counts_every_process_and_the_largest_peak():
    grow = "b = bytearray(150_000_000); import time; time.sleep(1.5)"
    code = (f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', {grow!r}]); "
            "a = bytearray(60_000_000); p.wait()")
    proc = subprocess.Popen([sys.executable, "-c", code])
    samples, largest = process_tree.sampled(proc)
    assert 150 <= largest < 250                                # the grandchild's own high-water mark
    assert max(s[2] for s in samples) >= 210                   # both processes together
    assert float(process_tree.load()) >= 0


@pytest.mark.slow
def test_bench_runs_every_stage_on_a_small_corpus(tmp_path):
    res = subprocess.run([sys.executable, "bench/bench_stages_scale.py", "--gb", "0.002", "--workers", "1",
                          "--words-from", str(SAMPLE), "--work", str(tmp_path), "--project", "100"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = [line.split(" | ") for line in res.stdout.splitlines() if line.startswith("| 0.002 |")]
    assert [r[1] for r in rows] == ["ingest", "dedup", "split", "filter", "shard", "vocab", "encode"]
    assert all(float(r[2].replace(",", "")) > 1 for r in rows), res.stdout          # input MB
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(results) == 7
    # a peak RSS for each stage that outlived a sample (0.2 s); one that ends before may show none
    assert all(r["largest"] > 0 for r in results if r["wall"] > 0.5), res.stdout
    assert "| encode | 0.002 |" in res.stdout and "| all | | | |" in res.stdout      # the projection
    assert list((tmp_path / "0.002gb-local/hu").glob("hdf5_*/hu*/*.hdf5"))
