"""ingest --corpus (web corpora by language) through --corpus-root, a local copy laid out as the
Hub repository (how the tests run without a network, and how a cluster with a mirror runs): the
language's text and each document's own columns beside it; the slice (--max-tokens, --max-gb,
--min-language-score) the same for any number of workers; an hf:// source; MADLAD-400's layout;
bad input as one line with nothing written; and with Wikipedia, dedup removes the copies of its
articles planted in the web corpus. (The Hub itself: tests/pipeline/corpora/test_hub.py.)"""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import StageError
from pipeline.corpora.locate import ingested
from pipeline.corpora.metadata import read_meta
from pipeline.corpora.tokens import estimate_tokens
from pipeline.stages.dedup import dedup
from pipeline.stages.ingest import ingest
from pipeline.text.corpus_files import clean_document
from pipeline.text.documents import documents, read_utf8
from tests.helpers.hub_corpus import fineweb2_repo, fineweb2_rows, madlad_repo
from tests.helpers.web_corpus import planted_corpus

FINNISH = [[f"Tämä on suomenkielinen verkkosivu numero {i}, jossa on tarpeeksi sanoja."] for i in range(40)]


@pytest.fixture(scope="module")
def web(wiki, tmp_path_factory) -> tuple[Path, list]:
    """FineWeb-2's layout: a Hungarian part of 6 exact and 6 near copies of the sample's articles
    and 200 new documents (sentences of its articles mixed) over 3 files, a Finnish part."""
    docs = [d for f in sorted((wiki / "hu/formatted").glob("*.txt")) for d in documents(read_utf8(f))]
    planted = planted_corpus(docs, seed=0, new=200)
    repo = fineweb2_repo(tmp_path_factory.mktemp("web") / "fineweb-2",
                         {"hun_Latn": [d for _k, d in planted], "fin_Latn": FINNISH})
    return repo, planted


def parts(data: Path, source: str = "fineweb-2") -> list[Path]:
    return sorted((data / "hu/ingested").glob(f"{source}__*.txt"))


def texts(data: Path, source: str = "fineweb-2") -> list[list[str]]:
    return [d for p in parts(data, source) for d in documents(read_utf8(p))]


def metadata(data: Path, source: str = "fineweb-2") -> list[dict]:
    return [r for p in parts(data, source) for r in read_meta(p).to_pylist()]


def test_the_languages_text_with_its_own_columns_beside_it(web, tmp_path):
    repo, _planted = web
    data = tmp_path / "data"
    summary = ingest(data_dir=data, lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo},
                     part_mb=0.02)
    rows = fineweb2_rows(repo, "hun_Latn")
    assert texts(data) == [clean_document(r["text"].split("\n"), Counter()) for r in rows]
    meta = metadata(data)
    assert len(parts(data)) > 3 and len(meta) == len(rows) == summary["documents"] == 212
    assert [m["id"] for m in meta] == [r["id"] for r in rows]
    assert [m["url"] for m in meta] == [r["url"] for r in rows]
    assert [m["language_score"] for m in meta] == [r["language_score"] for r in rows]
    assert [m["tokens"] for m in meta] == [estimate_tokens(r["text"]) for r in rows]
    assert pq.read_schema(next((data / "hu/ingested").glob("*.meta.parquet"))).names == [
        "id", "url", "dump", "date", "language_score", "tokens"]
    manifest = json.loads((data / "hu/ingested/manifest.json").read_text())
    record = manifest["corpora"]["fineweb-2"]
    assert (record["from"], record["language"], record["license"]) == ("mirror", "hun_Latn", ["odc-by"])
    assert summary["per_source"]["fineweb-2"]["estimated_tokens"] == sum(m["tokens"] for m in meta)
    took = ingested(data, "hu")["fineweb-2"]      # what a recipe reads back: provenance and counts
    assert (took["documents"], took["estimated_tokens"], took["license"]) == (
        212, sum(m["tokens"] for m in meta), ["odc-by"])
    # the manifest lists the metadata files beside the parts, so a rerun checks they are there
    outputs = {o["path"] for o in manifest["outputs"]}
    assert {p.name for p in parts(data)} | {p.name for p in (data / "hu/ingested").glob("*.meta.parquet")} == outputs


def test_the_slice_is_the_same_for_any_workers(web, tmp_path):
    repo, _planted = web
    options = {"corpora": ["fineweb-2"], "corpus_roots": {"": repo}, "max_tokens": ["5000"],
               "min_language_score": 0.7, "part_mb": 0.01}
    ingest(data_dir=tmp_path / "one", lang="hu", workers=1, **options)
    ingest(data_dir=tmp_path / "two", lang="hu", workers=2, **options)
    one = {p.name: p.read_bytes() for p in (tmp_path / "one/hu/ingested").glob("fineweb-2__*")}
    assert one == {p.name: p.read_bytes() for p in (tmp_path / "two/hu/ingested").glob("fineweb-2__*")}
    meta = metadata(tmp_path / "one")
    tokens = [m["tokens"] for m in meta]
    assert sum(tokens) >= 5000 > sum(tokens[:-1])       # the document reaching the budget is the last
    assert all(m["language_score"] >= 0.7 for m in meta)
    kept = [r for r in fineweb2_rows(repo, "hun_Latn") if r["language_score"] >= 0.7]
    assert [m["id"] for m in meta] == [r["id"] for r in kept[:len(meta)]]   # the corpus's order
    first = min(f.stat().st_size for f in (repo / "data/hun_Latn/train").glob("*.parquet"))
    ingest(data_dir=tmp_path / "gb", lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo},
           max_gb=[str(first / 1e9)])
    assert {m["id"] for m in metadata(tmp_path / "gb")} == {
        r["id"] for r in pq.read_table(repo / "data/hun_Latn/train/000_00000.parquet").to_pylist()}


def test_any_hub_dataset_by_url_reads_the_same_text(web, tmp_path):
    repo, _planted = web
    ingest(data_dir=tmp_path / "named", lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo})
    url = "hf://datasets/HuggingFaceFW/fineweb-2/data/hun_Latn/train/*.parquet"
    ingest(data_dir=tmp_path / "url", lang="hu", workers=1, sources={"web": url}, corpus_roots={"web": repo})
    assert texts(tmp_path / "url", "web") == texts(tmp_path / "named")
    record = json.loads((tmp_path / "url/hu/ingested/manifest.json").read_text())["corpora"]["web"]
    assert record["license"] == ["odc-by"] and record["language"] == ""   # the licence from its card


def test_madlad_layout_bcp47_codes_and_a_corpus_without_scores(tmp_path):
    hu = [[f"Egy MADLAD-dokumentum, a(z) {i}. bekezdés szövege."] for i in range(30)]
    repo = madlad_repo(tmp_path / "madlad", {"hu": hu, "sr": hu[:3], "sr_Latn": hu[:4]})
    data = tmp_path / "data"
    ingest(data_dir=data, lang="hu", workers=1, corpora=["madlad-400"], corpus_roots={"": repo})
    assert texts(data, "madlad-400") == hu                          # the clean files, not the noisy one
    assert read_meta(parts(data, "madlad-400")[0]).column_names == ["tokens"]
    ingest(data_dir=tmp_path / "sr", lang="sr", workers=1, corpora=["madlad-400"], corpus_roots={"": repo})
    record = json.loads((tmp_path / "sr/sr/ingested/manifest.json").read_text())["corpora"]["madlad-400"]
    assert record["language"] == "sr"            # Serbian's Wikipedia is Cyrillic: not sr_Latn
    with pytest.raises(StageError, match="MADLAD-400 .clean. has no language score column"):
        ingest(data_dir=tmp_path / "x", lang="hu", corpora=["madlad-400"], corpus_roots={"": repo},
               min_language_score=0.5)


@pytest.mark.parametrize("kwargs, message", [
    ({"corpora": ["fineweb-2", "madlad-400"], "corpus_roots": {"": "."}}, "give NAME=DIR for each"),
    ({"corpora": ["fineweb-2"], "corpus_roots": {"": "/nonexistent/fw2"}}, "no such folder"),
    ({"corpora": ["fineweb-2"], "corpus_roots": {"web": "."}}, "not a web source of this ingest"),
    ({"corpora": ["fineweb-2"], "max_tokens": ["0"]}, "--max-tokens 0: a number above 0"),
    ({"sources": {"web": "hf://datasets/only-a-name"}}, "hf://datasets/ORG/REPO/GLOB"),
    ({"corpora": ["fineweb-2:xyz_Latn"]}, "no part for --corpus fineweb-2:xyz_Latn; its nearest"),
    ({"corpora": ["fineweb-2"], "max_gb": ["web=1"]}, "are for web sources .* not web"),
    ({"sources": {"web": "local.txt"}, "min_language_score": 0.5}, "are for web sources"),
])
def test_bad_input_is_one_line_and_nothing_written(web, tmp_path, kwargs, message):
    repo, _planted = web
    kwargs = {"corpus_roots": {"": repo}, **kwargs}
    with pytest.raises(StageError, match=message):
        ingest(data_dir=tmp_path / "d", lang="hu", workers=1, **kwargs)
    assert not (tmp_path / "d").exists()


def test_with_wikipedia_dedup_removes_the_planted_copies(wiki, web, tmp_path):
    repo, planted = web
    data = tmp_path / "data"
    shutil.copytree(wiki, data)
    ingest(data_dir=data, lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo})
    per = dedup(data_dir=data, lang="hu", workers=1)["per_source"]
    kinds = Counter(k for k, _d in planted)
    assert per["wikipedia"]["kept"] == per["wikipedia"]["documents"] == 40       # Wikipedia's copy wins
    assert (per["fineweb-2"]["exact"], per["fineweb-2"]["near"]) == (kinds["exact"], kinds["near"]) == (6, 6)
    assert per["fineweb-2"]["kept"] == kinds["new"] == 200
