"""A second corpus for the ingest and dedup tests, written from the sample dump's own articles:
exact copies, near copies (a share of words changed, paragraphs reordered or cut) and new
documents (sentences of different articles mixed), in the formats ingest reads.

Usage:
    docs = sample_documents(tmp_path)                       # the sample's formatted documents
    web = planted_corpus(docs, seed=0)                      # [(kind, paragraphs), ...]
    write_corpus(path, [p for _k, p in web], "jsonl.gz")
"""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
from pathlib import Path

from common.atomic import atomic_open
from pipeline.text.documents import documents, read_utf8


def sample_documents(workdir: Path, sample_dump: Path) -> list[list[str]]:
    """The formatted documents of the sample dump (extract + format into `workdir`)."""
    from pipeline.stages.extract import extract
    from pipeline.stages.format import format_corpus

    extract(input=sample_dump, output=workdir / "extracted", workers=1)
    format_corpus(input=workdir / "extracted", output=workdir / "formatted", workers=1)
    return [d for f in sorted((workdir / "formatted").glob("*.txt")) for d in documents(read_utf8(f))]


def near_copy(doc: list[str], rnd: random.Random, share: float = 0.05) -> list[str]:
    """`doc` with `share` of its words changed (reversed), its first two paragraphs swapped."""
    paras = [p.split() for p in doc]
    spots = [(i, j) for i, p in enumerate(paras) for j in range(len(p))]
    for i, j in rnd.sample(spots, max(1, int(share * len(spots)))):
        paras[i][j] = paras[i][j][::-1] + "x"
    out = [" ".join(p) for p in paras]
    if len(out) > 1:
        out[0], out[1] = out[1], out[0]
    return out


def mixed_documents(docs: list[list[str]], n: int, rnd: random.Random) -> list[list[str]]:
    """`n` new documents of three paragraphs, each of sentences drawn from different articles."""
    sentences = [s.strip() + "." for d in docs for p in d for s in p.split(". ") if len(s) > 30]
    return [[" ".join(rnd.sample(sentences, 3)) for _ in range(3)] for _ in range(n)]


def planted_corpus(docs: list[list[str]], seed: int = 0, copies: int = 6, near: int = 6,
                   new: int = 20) -> list[tuple[str, list[str]]]:
    """[(kind, paragraphs)]: `copies` exact copies, `near` near copies of the first articles,
    then `new` mixed documents."""
    rnd = random.Random(seed)
    out = [("exact", list(d)) for d in docs[:copies]]
    out += [("near", near_copy(d, rnd)) for d in docs[copies:copies + near]]
    out += [("new", d) for d in mixed_documents(docs, new, rnd)]
    return out


_OPEN = {"": open, "gz": gzip.open, "bz2": bz2.open, "xz": lzma.open}


def write_corpus(path: Path, docs: list[list[str]], kind: str, field: str = "text") -> Path:
    """Write `docs` as `kind`: text[.gz|.bz2|.xz|.zst], lines (a document per line), jsonl[...],
    parquet."""
    path.parent.mkdir(parents=True, exist_ok=True)
    base, _, comp = kind.partition(".")
    if base == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({field: ["\n".join(d) for d in docs], "id": list(range(len(docs)))}),
                       path, row_group_size=7)
        return path
    if base == "text":
        body = "\n\n".join("\n".join(d) for d in docs) + "\n"
    elif base == "lines":
        body = "".join(" ".join(d) + "\n" for d in docs)
    else:
        body = "".join(json.dumps({"id": i, field: "\n".join(d)}, ensure_ascii=False) + "\n"
                       for i, d in enumerate(docs))
    data = body.encode("utf-8")
    if comp == "zst":
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
        with atomic_open(path, "wb") as fh:
            fh.write(data)
        return path
    with _OPEN[comp](path, "wb") as fh:
        fh.write(data)
    return path
