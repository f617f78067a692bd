"""bench/bench_shard_scale.py: its input is documents in the filter stage's format of two sources,
seeded, and the bench runs the real `pipeline shard` on them end to end, checking the stage's
counts against the input's and writing its table and results rows."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.core.sources import source_of
from pipeline.text.documents import read_documents
from tests.helpers.script_module import ROOT, load_script

bench = load_script("bench/bench_shard_scale.py")
SAMPLE = ROOT / "data/sample/huwiki-sample.xml.bz2"


def test_input_is_sentences_of_documents_from_two_sources_and_seeded(tmp_path):
    folder, counts = bench.generated(tmp_path / "a", 3000, seed=1, workers=1, words_from=SAMPLE)
    files = sorted(folder.glob("*.txt"))
    assert {source_of(f.name) for f in files} == {"wikipedia", "web"}
    per_source = {}
    words = {w.lower() for w in (tmp_path / "a/words.txt").read_text(encoding="utf-8").split()}
    for path in files:
        docs = list(read_documents(path))
        per_source[source_of(path.name)] = per_source.get(source_of(path.name), 0) + len(docs)
        for doc in docs:
            assert bench.SENTENCES[0] <= len(doc) <= bench.SENTENCES[1]
            for sentence in doc:
                assert sentence[0].isupper() and sentence.endswith(".") and "  " not in sentence
                assert bench.WORDS[0] <= len(sentence.split()) <= bench.WORDS[1]
                assert {w.lower() for w in sentence[:-1].split()} <= words
    assert per_source == counts["sources"] and sum(per_source.values()) == counts["documents"] == 3000
    assert counts["bytes"] == sum(f.stat().st_size for f in files)
    again, _ = bench.generated(tmp_path / "b", 3000, seed=1, workers=1, words_from=SAMPLE)
    assert [f.read_bytes() for f in files] == [f.read_bytes() for f in sorted(again.glob("*.txt"))]


def test_bench_runs_shard_and_checks_its_counts(tmp_path):
    res = subprocess.run([sys.executable, "bench/bench_shard_scale.py", "--docs", "3000", "2000", "--runs", "1",
                          "--workers", "1", "--weights", "web=2", "--words-from", str(SAMPLE), "--work",
                          str(tmp_path), "--label", "this checkout"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = [line.split(" | ") for line in res.stdout.splitlines() if line.startswith("| this checkout |")]
    assert [r[1] for r in rows] == ["2,000", "3,000"]                  # smallest first
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["documents"] for r in results] == [2000, 3000]
    for r in results:
        assert r["summary"]["documents"] == r["documents"] and r["weights"] == {"web": 2.0}
        assert r["summary"]["training_documents"] > r["documents"]    # the web's documents twice
        assert r["wall"] > 0 and r["docs_per_s"] > 0 and r["text_gb"] > 0
    assert results[0]["bytes_per_doc_growth"] is None and results[1]["bytes_per_doc_growth"] is not None
    assert not list(tmp_path.glob("out-*"))                            # outputs removed (the disk)
    assert (tmp_path / "docs-3000/counts.json").is_file()              # inputs kept until --clean


def test_a_summary_that_misses_documents_is_an_error(tmp_path):
    folder, counts = bench.generated(tmp_path, 2000, seed=0, workers=1, words_from=SAMPLE)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "pipeline", "--lang", "uk", "-q", "shard", "--input", str(folder),
                    "--output", str(out)], cwd=ROOT, check=True)
    assert bench.checked(out, counts, {})["documents"] == 2000
    with pytest.raises(SystemExit, match="^Error: shard's output .* does not match its input: documents 2,000"):
        bench.checked(out, {**counts, "documents": 2001}, {})
    (out / "ukwiki_training_0.txt").unlink()
    with pytest.raises(SystemExit, match="shards in the summary, not in"):
        bench.checked(out, counts, {})
