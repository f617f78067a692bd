"""Reading other corpora than Wikipedia, streamed: plain text, JSONL and Parquet, compressed or not.

Formats (from the file name, or given):
  text     one paragraph per line, a blank line between documents (CC-100, OSCAR's text
           releases); with doc_per_line=True one document per line
  jsonl    one JSON object per line, the text in `field` (newlines in it separate paragraphs)
  parquet  a column `field` of strings, as Hugging Face datasets write it
Compression from the suffix: .gz, .bz2, .xz, .zst (Parquet compresses inside the file).

Everything is streamed: a line, a JSON record or a batch of Parquet rows at a time, so memory
does not grow with the file (a document is cut after MAX_DOC_CHARS). Problems a user should
hear about are counted in `stats` (lines that are not UTF-8, records without the field,
JSON that does not parse, cut documents), never silently dropped; a file that is not its format
at all is a StageError from `check_file` before any output is written.

Usage:
    fmt = detect_format(Path("cc100.hu.txt.xz"))            # "text"
    check_file(path, fmt, field="text")                       # StageError if it is not that
    for paragraphs in read_documents(path, fmt, stats=Counter()): ...   # cleaned paragraphs
    for paragraphs, meta in read_records(path, "parquet", stats, columns=("url",)): ...   # as stored
"""
from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pipeline.core.errors import StageError
from pipeline.core.os_errors import is_data_error

from .cleaning import clean_fragment

FORMATS = ("text", "jsonl", "parquet")
COMPRESSIONS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_SUFFIX_FORMAT = {".txt": "text", ".text": "text", ".jsonl": "jsonl", ".json": "jsonl",
                  ".ndjson": "jsonl", ".parquet": "parquet"}
MAX_DOC_CHARS = 1_000_000   # a "document" longer than this (a file without blank lines) is cut
PARQUET_BATCH_ROWS = 1024
_SNIFF_BYTES = 1 << 16


def compression_of(path: Path) -> str:
    suffix = path.suffix.lower()
    return suffix if suffix in COMPRESSIONS or suffix == ".zst" else ""


def detect_format(path: Path, forced: str | None = None) -> str:
    """The format of `path`: `forced`, else its suffix under the compression one."""
    if forced:
        return forced
    stem = path.name[: -len(compression_of(path))] if compression_of(path) else path.name
    fmt = _SUFFIX_FORMAT.get(Path(stem).suffix.lower())
    if fmt is None:
        raise StageError(f"{path}: cannot tell the format from the name (known: "
                         f"{', '.join(sorted(_SUFFIX_FORMAT))}, optionally .gz/.bz2/.xz/.zst): "
                         "give --format text|jsonl|parquet")
    return fmt


def open_binary(path: Path) -> BinaryIO:
    """The decompressed bytes of `path` as a stream."""
    comp = compression_of(path)
    if comp == ".zst":
        return io.BufferedReader(_ZstdReader(open(path, "rb")), buffer_size=1 << 20)
    if comp:
        return COMPRESSIONS[comp](path, "rb")
    return open(path, "rb")


class _ZstdReader(io.RawIOBase):
    """A .zst file's bytes, frame after frame; EOFError when the file ends inside a frame
    (zstandard's stream_reader would end quietly there, a cut file read as a shorter one)."""

    def __init__(self, raw: BinaryIO):
        import zstandard

        self._raw, self._zstd = raw, zstandard.ZstdDecompressor()
        self._dobj, self._pending, self._in_frame = self._zstd.decompressobj(), b"", False

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        while not self._pending:
            leftover = b""
            if self._dobj.eof:   # a frame ended: the next one starts with what it left over
                leftover, self._dobj = self._dobj.unused_data, self._zstd.decompressobj()
            data = leftover or self._raw.read(1 << 16)   # small: bounded output per call
            if not data:
                if self._in_frame:
                    raise EOFError("the .zst file ends inside a frame")
                return 0
            self._pending = memoryview(self._dobj.decompress(data))
            self._in_frame = not self._dobj.eof
        n = min(len(buf), len(self._pending))
        buf[:n], self._pending = self._pending[:n], self._pending[n:]   # views: no copies
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _lines(path: Path, stats: Counter) -> Iterator[str]:
    """Decoded lines; a line that is not UTF-8 is counted and skipped."""
    with open_binary(path) as fh:
        for raw in fh:
            stats["lines"] += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                stats["invalid_utf8_lines"] += 1
                continue
            if "\x00" in line:
                stats["binary_lines"] += 1
                continue
            yield line.rstrip("\r\n").lstrip("\ufeff")


def _clean(paragraphs, stats: Counter) -> list[str]:
    out = []
    for p in paragraphs:
        p = clean_fragment(p)
        if p:
            out.append(p)
    return out


def _text_documents(path: Path, stats: Counter, doc_per_line: bool) -> Iterator[list[str]]:
    doc: list[str] = []
    size = 0
    for line in _lines(path, stats):
        if doc_per_line:
            if line.strip():
                yield [line]
            continue
        if line.strip():
            doc.append(line)
            size += len(line)
            if size < MAX_DOC_CHARS:
                continue
            stats["cut_documents"] += 1
        if doc:
            yield doc
            doc, size = [], 0
    if doc:
        yield doc


def _jsonl_documents(path: Path, stats: Counter, field: str,
                     columns: tuple[str, ...]) -> Iterator[tuple[list[str], dict]]:
    for line in _lines(path, stats):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            stats["invalid_json_lines"] += 1
            continue
        text = record.get(field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            stats["records_without_field"] += 1
            continue
        yield text.split("\n"), {c: record[c] for c in columns if c in record}


def parquet_columns(path: Path) -> list[str]:
    """The column names of a Parquet file (its footer only)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).schema_arrow.names


def _parquet_documents(path: Path, stats: Counter, field: str,
                       columns: tuple[str, ...]) -> Iterator[tuple[list[str], dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:   # mimalloc (arrow's default) keeps growing over a long read; jemalloc stays flat
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:
        pass
    pf = pq.ParquetFile(path, pre_buffer=False)   # a row group at a time, never the file
    kept = [c for c in columns if c in pf.schema_arrow.names and c != field]
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[field, *kept], use_threads=False):
        values = [batch.column(i + 1).to_pylist() for i in range(len(kept))]
        for row, text in enumerate(batch.column(0).to_pylist()):
            stats["records"] += 1
            if not isinstance(text, str):
                stats["records_without_field"] += 1
                continue
            yield text.split("\n"), {c: v[row] for c, v in zip(kept, values)}


def read_records(path: Path, fmt: str, stats: Counter, field: str = "text", doc_per_line: bool = False,
                 columns: tuple[str, ...] = ()) -> Iterator[tuple[list[str], dict]]:
    """The records of `path` as they are: (paragraphs, {column: value} of those of `columns`
    the file has), before cleaning; a damaged file is one StageError line (read_documents)."""
    if fmt == "text":
        raw = ((doc, {}) for doc in _text_documents(path, stats, doc_per_line))
    elif fmt == "jsonl":
        raw = _jsonl_documents(path, stats, field, columns)
    else:
        raw = _parquet_documents(path, stats, field, columns)
    n = 0
    try:
        for record in raw:
            n += 1
            yield record
    except Exception as exc:
        _raise_read_error(exc, path, n)


def clean_document(paragraphs: list[str], stats: Counter) -> list[str]:
    """A record's paragraphs cleaned (NFC, no control characters, one space between words:
    Wikipedia's cleaning where it applies), the empty ones left out; an empty document counted."""
    doc = _clean(paragraphs, stats)
    if not doc:
        stats["empty_documents"] += 1
    return doc


def read_documents(path: Path, fmt: str, stats: Counter, field: str = "text",
                   doc_per_line: bool = False) -> Iterator[list[str]]:
    """The documents of `path` as lists of cleaned paragraphs; `stats` counts what went."""
    for paragraphs, _meta in read_records(path, fmt, stats, field, doc_per_line):
        doc = clean_document(paragraphs, stats)
        if doc:
            yield doc


def _raise_read_error(exc: Exception, path: Path, n: int) -> None:
    if not isinstance(exc, _read_errors()):   # modules the reader imported: no import now
        raise exc
    if is_data_error(exc):   # a failing disk, not a damaged file: its own line (os_errors.py)
        exc.filename = exc.filename or str(path)
        raise exc
    raise StageError(f"{path}: reading stopped after {n:,} documents ({exc}): the file is "
                     "damaged or cut short: download it again or leave it out") from None


def _read_errors() -> tuple[type[BaseException], ...]:
    """What a damaged or truncated file raises while it is read (each decompressor its own)."""
    errors: list[type[BaseException]] = [OSError, EOFError, lzma.LZMAError]
    # only a module a reader has imported can raise: importing pyarrow for a text file would
    # cost half a second and start its allocator's threads
    for module, name in (("zstandard", "ZstdError"), ("pyarrow", "ArrowException")):
        if module in sys.modules:
            errors.append(getattr(sys.modules[module], name))
    return tuple(errors)


def check_file(path: Path, fmt: str, field: str = "text") -> None:
    """StageError unless `path` looks like `fmt`: its start decompresses, text is not binary,
    JSONL's first record is an object with `field`, the Parquet file has a column `field`."""
    what = f"{path} (read as {fmt}{' ' + compression_of(path) if compression_of(path) else ''})"
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            names = pq.ParquetFile(path).schema_arrow.names
        except Exception as exc:  # pyarrow raises several kinds for a file that is not Parquet
            raise StageError(f"{what} is not a Parquet file ({exc}): check the file or --format") from None
        if field not in names:
            raise StageError(f"{what} has no column {field!r} (columns: {', '.join(names)}): "
                             "name the text column with --text-field")
        return
    try:
        with open_binary(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except Exception as exc:  # gzip, bz2, lzma and zstandard each raise their own kinds
        raise StageError(f"{what} cannot be decompressed ({exc}): check the file or its suffix") from None
    if b"\x00" in head:
        raise StageError(f"{what} is binary, not text: check the file or --format")
    if fmt == "jsonl":
        first = next((ln for ln in head.split(b"\n") if ln.strip()), b"")
        try:
            record = json.loads(first)
        except ValueError:
            if len(first) < len(head) or len(head) < _SNIFF_BYTES:
                raise StageError(f"{what}: its first line is not JSON: check the file or "
                                 "--format") from None
            return   # a first record longer than the sniff: the reader counts it if it is bad
        if not isinstance(record, dict) or field not in record:
            keys = ", ".join(record) if isinstance(record, dict) else type(record).__name__
            raise StageError(f"{what}: its first record has no field {field!r} (it has: {keys}): "
                             "name the text field with --text-field")
