"""dedup's keep rule, bucketed on disk and applied in one ordered sweep, against the rule written
the plain way (tests/helpers/dedup_reference.py: every document compared with every kept one):
the same kept documents and paragraphs on a corpus of planted exact and near copies, chains,
clusters and repeated paragraphs in five scripts, whatever the number of buckets, workers and
candidates a band list records; and the order dependence of "an earlier KEPT document" itself."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.stages.dedup import dedup, dedup_inputs
from pipeline.stages.ingest import ingest
from pipeline.text import dedup_buckets
from pipeline.text.documents import documents, format_documents, read_utf8
from pipeline.text.near_dups import estimated_jaccard, normalised_words, signature
from tests.helpers.dedup_reference import changed, planted_documents, random_words, reference_decisions
from tests.helpers.web_corpus import write_corpus


def ingested(folder: Path, sources: dict[str, list[list[str]]], part_mb: float = 0.02) -> Path:
    """DATA_DIR with `sources` ingested (in this order, several files each)."""
    paths = {name: write_corpus(folder / f"{name}.txt", docs, "text") for name, docs in sources.items()}
    data = folder / "data"
    ingest(data_dir=data, lang="hu", workers=1, sources={k: str(v) for k, v in paths.items()}, part_mb=part_mb)
    return data


def expected_outputs(data: Path) -> tuple[dict[str, str], list]:
    """The reference rule over the ingested files in keep order: {file name: kept text}, reasons."""
    files = [f for _s, f in dedup_inputs(data, "hu", False)]
    per_file = [list(documents(read_utf8(f))) for f in files]
    reasons, dropped = reference_decisions([d for docs in per_file for d in docs])
    out, i = {}, 0
    for f, docs in zip(files, per_file):
        kept = [[line for line, gone in zip(doc, dropped[i + k]) if not gone]
                for k, doc in enumerate(docs) if reasons[i + k] is None]
        i += len(docs)
        if kept:
            out[f.name] = format_documents(kept)
    return out, reasons


def outputs(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt"))}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, str], list]:
    docs = [d for _k, d in planted_documents(seed=3, n=700)]
    # a later source repeats some of the first one's documents, near copies among them
    mirror = docs[500:] + docs[:40:2] + [changed(d, __import__("random").Random(1), 0.05) for d in docs[1:40:2]]
    data = ingested(tmp_path_factory.mktemp("corpus"), {"web": docs[:500], "mirror": mirror})
    want, reasons = expected_outputs(data)
    return data, want, reasons


def test_the_corpus_has_every_case(corpus):
    _data, _want, reasons = corpus
    counts = {r: reasons.count(r) for r in ("exact", "near", "paragraphs")}
    print(counts, reasons.count(None))
    assert counts["exact"] >= 50 and counts["near"] >= 100 and counts["paragraphs"] >= 10


@pytest.mark.parametrize("memory_mb, workers, cap", [(500, 1, 8), (0.1, 2, 8), (0.1, 1, 1)],
                         ids=["one-bucket", "13-buckets-2-workers", "cap-1"])
def test_same_kept_documents_as_the_plain_rule(corpus, tmp_path, monkeypatch, memory_mb, workers, cap):
    data, want, reasons = corpus
    monkeypatch.setattr(dedup_buckets, "CAP", cap)   # workers=1 runs the tasks in this process
    summary = dedup(data_dir=data, lang="hu", workers=workers, wikipedia=False, output=tmp_path / "out",
                    memory_mb=memory_mb)
    assert outputs(tmp_path / "out") == want
    assert summary["exact"] == reasons.count("exact") and summary["near"] == reasons.count("near")
    assert summary["paragraphs"] == reasons.count("paragraphs")


def test_removed_only_by_an_earlier_kept_document(tmp_path):
    """A~B and B~C but not A~C: B goes for A, C stays (B was not kept). An exact copy of a
    removed document stays too when no kept one matches it (its text split otherwise)."""
    import random

    rnd = random.Random(5)
    a = [" ".join(random_words(rnd, 40))]
    for _ in range(200):
        b, c = changed(a, rnd, 0.09), None
        c = changed(b, rnd, 0.09)
        sig = [signature(normalised_words(d[0])) for d in (a, b, c)]
        if estimated_jaccard(sig[0], sig[1]) >= 0.6 and estimated_jaccard(sig[1], sig[2]) >= 0.6 \
                and estimated_jaccard(sig[0], sig[2]) < 0.4:
            break
    else:
        pytest.fail("no chain found")
    x, y = ([" ".join(random_words(rnd, 15)) for _ in range(2)] for _ in range(2))
    # d: only paragraphs that kept x and y hold (removed); e: d's words in one paragraph (the
    # same text and signature as d, a paragraph no one holds): kept, an exact copy of a document
    d = [x[0], y[0]]
    e = [" ".join(d)]
    data = ingested(tmp_path, {"web": [a, b, c, x, y, d, e]}, part_mb=1)
    summary = dedup(data_dir=data, lang="hu", workers=1, wikipedia=False, output=tmp_path / "out")
    kept = [doc for f in sorted((tmp_path / "out").glob("*.txt")) for doc in documents(read_utf8(f))]
    assert kept == [a, c, x, y, e]
    assert (summary["near"], summary["paragraphs"], summary["exact"]) == (1, 1, 0)
    assert expected_outputs(data)[1] == [None, "near", None, None, None, "paragraphs", None]


def test_past_the_recorded_candidates_the_band_list_is_read(tmp_path, monkeypatch):
    """With one candidate recorded a band: m3's first two similar documents (m1, m2, each made
    of paragraphs that kept documents hold) were removed, the third (m_kept) was kept: m3 goes
    as its near copy only if the sweep reads the rest of the band's list."""
    import random

    rnd = random.Random(11)
    p = [" ".join(random_words(rnd, 15)) for _ in range(3)]
    holders = [[p[i], " ".join(random_words(rnd, 40))] for i in range(3)]
    m1, m2 = [p[0], p[1], p[2]], [p[1], p[0], p[2]]
    m_kept, m3 = [p[0], p[1], changed([p[2]], rnd, 0.1)[0]], [p[0], p[1], changed([p[2]], rnd, 0.1)[0]]
    docs = [*holders, m1, m2, m_kept, m3]
    want = [None, None, None, "paragraphs", "paragraphs", None, "near"]
    assert reference_decisions(docs)[0] == want
    data = ingested(tmp_path, {"web": docs}, part_mb=1)
    monkeypatch.setattr(dedup_buckets, "CAP", 1)
    summary = dedup(data_dir=data, lang="hu", workers=1, wikipedia=False, output=tmp_path / "out")
    kept = [doc for f in sorted((tmp_path / "out").glob("*.txt")) for doc in documents(read_utf8(f))]
    assert kept == [*holders, m_kept[2:]] and summary["near"] == 1   # its held paragraphs go
