"""A corpus's own columns, per document, beside each ingested part: `NAME__STEM_PPPP.meta.parquet`
beside `NAME__STEM_PPPP.txt` holds one row a document of the part, in the part's order, with the
columns the corpus keeps (named.py: FineWeb-2's id, url, dump, date, language_score) and
`tokens`, the document's estimated tokens (tokens.py). The text files keep their format, so
dedup, split and filter read them unchanged (they list *.txt only).

Usage:
    schema = meta_schema(source_file, "parquet", ("id", "url", "language_score"))
    with MetaPart(part_path, schema) as meta:
        meta.add({"id": "...", "url": "..."}, tokens=412)
    read_meta(part_path)        # a pyarrow Table, or None where the part has no metadata
"""
from __future__ import annotations

from pathlib import Path

from pipeline.core.parquet import ParquetParts, require_pyarrow

META_SUFFIX = ".meta.parquet"
TOKENS = "tokens"


def meta_path(part: Path) -> Path:
    """The metadata file of an ingested part (`X.txt` -> `X.meta.parquet`)."""
    name = part.name[: -len(".txt")] if part.name.endswith(".txt") else part.name
    return part.with_name(name + META_SUFFIX)


def meta_schema(source: Path, fmt: str, kept: tuple[str, ...]):
    """The metadata's columns (a pyarrow schema): those of `kept` the source has, typed as in a
    Parquet source (as strings from JSON), then `tokens`."""
    pa, pq = require_pyarrow()   # pyarrow loads with the first web file: a text corpus starts fast
    if fmt == "parquet":
        schema = pq.ParquetFile(source).schema_arrow
        fields = [schema.field(c) for c in kept if c in schema.names]
    else:
        fields = [pa.field(c, pa.string()) for c in kept]
    return pa.schema([*fields, pa.field(TOKENS, pa.int64())])


class MetaPart(ParquetParts):
    """One part's metadata file, a row a document (written whole, renamed into place at the end)."""

    def __init__(self, part: Path, schema):
        super().__init__(meta_path(part), schema, group_bytes=8 << 20)
        self._strings = {f.name for f in schema if str(f.type) == "string"}

    def add(self, meta: dict, tokens: int) -> None:  # type: ignore[override]
        row = {k: (str(v) if k in self._strings and v is not None and not isinstance(v, str) else v)
               for k, v in meta.items()}
        row[TOKENS] = tokens
        super().add(row, nbytes=64 + sum(len(str(v)) for v in row.values()))


def read_meta(part: Path):
    """The metadata table of an ingested part, or None where it has none."""
    path = meta_path(Path(part))
    return require_pyarrow()[1].read_table(path) if path.is_file() else None
