"""The report's per-source funnel (pipeline/report/sources.py) on a real mix: the sample's
Wikipedia and a FineWeb-2 copy with its articles planted, through ingest, dedup, split, filter,
shard (a weight) and encode: each source read, its copies removed, what split and filter left,
its training and held-out documents, its encoded tokens."""
from __future__ import annotations

import shutil

from pipeline.report.inputs import ReportInputs
from pipeline.report.sources import source_rows, sources_section
from pipeline.stages.dedup import dedup
from pipeline.stages.encode import encode
from pipeline.stages.filter import filter_documents
from pipeline.stages.ingest import ingest
from pipeline.stages.shard import shard
from pipeline.stages.split import split
from pipeline.text.documents import documents, read_utf8
from tests.helpers.encode_testdata import vocab_tokens, write_vocab
from tests.helpers.hub_corpus import fineweb2_repo
from tests.helpers.web_corpus import planted_corpus


def test_each_source_from_ingest_to_its_encoded_tokens(wiki, tmp_path):
    data = shutil.copytree(wiki, tmp_path / "data")
    docs = [d for f in sorted((data / "hu/formatted").glob("*.txt")) for d in documents(read_utf8(f))]
    repo = fineweb2_repo(tmp_path / "fineweb-2", {"hun_Latn": [d for _k, d in planted_corpus(docs, seed=0, new=30)]})
    ingest(data_dir=data, lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo})
    dedup(data_dir=data, lang="hu", workers=1)
    split(data_dir=data, lang="hu", workers=1)
    filter_documents(data_dir=data, lang="hu", workers=1)
    shard(data_dir=data, lang="hu", workers=1, weights={"fineweb-2": 2.0})
    text = "\n".join(p.read_text(encoding="utf-8") for p in (data / "hu/sharded").glob("*.txt"))
    write_vocab(tmp_path / "vocab", vocab_tokens(text))
    encode(data_dir=data, lang="hu", workers=1, vocab=tmp_path / "vocab", max_seq=128, max_pred=40, pack=True,
           dupe_factor=1)
    rows = {r["source"]: r for r in source_rows(ReportInputs.of(data / "hu"))}
    web, wikipedia = rows["fineweb-2"], rows["wikipedia"]
    assert (web["read"], web["exact"], web["near"]) == (42, 6, 6)       # the planted copies removed
    assert 0 < web["filtered"] <= 30 and web["test"] >= 1 and wikipedia["test"] >= 1
    assert web["training"] == 2 * (web["filtered"] - web["test"]) and web["weight"] == 2.0
    (docs_128, tokens_128), = web["encoded"].values()
    assert docs_128 == web["training"] and tokens_128 > 0
    html = sources_section(ReportInputs.of(data / "hu"), "hu").html()
    assert "after split and filter" in html and "encoded (training docs, tokens)" in html
