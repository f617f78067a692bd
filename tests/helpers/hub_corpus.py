"""Web corpora as their Hub repositories lay them out, written by the tests with pyarrow:
FineWeb-2's (data/{lang}_{Script}/train/*.parquet with its columns, test/ and _removed/ beside
them that a run must not read) and MADLAD-400's (data/{lang}/{lang}_clean_NNNN.jsonl.gz).

Usage:
    docs = {"hun_Latn": [["paragraph", ...], ...], "fin_Latn": [...]}
    repo = fineweb2_repo(tmp_path / "fineweb-2", docs, files=3)   # its folder
    rows = fineweb2_rows(repo, "hun_Latn")                         # what its training files hold
    madlad_repo(tmp_path / "madlad", {"hu": docs_hu})
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

LICENSE_CARD = "---\nlicense: {license}\n---\n\n# {title}, a copy written by the tests\n"
FINEWEB2_COLUMNS = ("text", "id", "dump", "url", "date", "file_path", "language", "language_score",
                    "language_script", "minhash_cluster_size", "top_langs")


def language_score(i: int) -> float:
    """A score between 0.55 and 0.99 that varies over the documents (a third below 0.7)."""
    return round(0.55 + (i * 37 % 45) / 100, 2)


def _rows(code: str, docs: list[list[str]], first: int) -> dict[str, list]:
    lang, script = code.split("_")
    n = range(first, first + len(docs))
    return {"text": ["\n".join(d) for d in docs],
            "id": [f"<urn:uuid:{code}-{i:06d}>" for i in n],
            "dump": [f"CC-MAIN-2024-{10 + i % 3}" for i in n],
            "url": [f"https://{lang}.example.org/page/{i}" for i in n],
            "date": ["2024-02-20T05:17:45Z" for _ in n],
            "file_path": [f"s3://commoncrawl/crawl-data/segments/{i}.warc.gz" for i in n],
            "language": [lang for _ in n], "language_score": [language_score(i) for i in n],
            "language_script": [script for _ in n], "minhash_cluster_size": [1 + i % 4 for i in n],
            "top_langs": [json.dumps({f"{code}_score": language_score(i)}) for i in n]}


def _split(docs: list, parts: int) -> list[list]:
    size = -(-len(docs) // parts)
    return [docs[i:i + size] for i in range(0, len(docs), size)]


def fineweb2_repo(root: Path, languages: dict[str, list[list[str]]], files: int = 3,
                  row_group_size: int = 16) -> Path:
    """`root` laid out as HuggingFaceFW/fineweb-2: each language's documents over `files`
    training files, a test file and a _removed folder of other text (never to be read)."""
    for code, docs in languages.items():
        first = 0
        for k, chunk in enumerate(_split(docs, files)):
            path = root / "data" / code / "train" / f"000_{k:05d}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.table(_rows(code, chunk, first)), path, row_group_size=row_group_size)
            first += len(chunk)
        other = [[f"{code} held out or removed text {i}, never to be read."] for i in range(5)]
        for folder in (f"{code}/test", f"{code}_removed/train"):
            path = root / "data" / folder / "000_00000.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.table(_rows(code, other, 10_000)), path)
    (root / "README.md").write_text(LICENSE_CARD.format(license="odc-by", title="FineWeb-2"), encoding="utf-8")
    (root / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n", encoding="utf-8")
    return root


def fineweb2_rows(root: Path, code: str) -> list[dict]:
    """The rows of a language's training files, in the corpus's order."""
    files = sorted((root / "data" / code / "train").glob("*.parquet"))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def madlad_repo(root: Path, languages: dict[str, list[list[str]]], files: int = 2) -> Path:
    """`root` laid out as allenai/MADLAD-400: data/{lang}/{lang}_clean_NNNN.jsonl.gz (and a noisy
    file beside, never to be read)."""
    for code, docs in languages.items():
        folder = root / "data" / code
        folder.mkdir(parents=True, exist_ok=True)
        for k, chunk in enumerate(_split(docs, files)):
            with gzip.open(folder / f"{code}_clean_{k:04d}.jsonl.gz", "wt", encoding="utf-8") as fh:
                fh.writelines(json.dumps({"text": "\n".join(d)}, ensure_ascii=False) + "\n" for d in chunk)
        with gzip.open(folder / f"{code}_noisy_0000.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write(json.dumps({"text": "noisy text, never to be read"}) + "\n")
    (root / "README.md").write_text(LICENSE_CARD.format(license="odc-by", title="MADLAD-400"), encoding="utf-8")
    return root
