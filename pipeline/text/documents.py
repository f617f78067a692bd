"""The text stages' files: UTF-8, one line per paragraph or sentence, documents separated by
one blank line.

Usage:
    text = read_utf8(path)                    # StageError naming the file and byte if not UTF-8
    for lines in documents(text): ...         # each document as its list of non-blank lines
    for lines in read_documents(path): ...    # the same, a line at a time (a file of any size)
    format_documents(docs)                    # "\n".join per doc, "\n\n" between, final "\n"
    doc_hash(doc_bytes(doc), seed)            # shard's seeded hash of a document (held out?)
    copies_of(doc_bytes(doc), seed, weight)   # its training copies under a source's --weight
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline.core.errors import StageError


def read_utf8(path: str | Path) -> str:
    """The text of `path` with "\\r\\n" made "\\n"; a one-line StageError if it is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, data[exc.start], exc.start) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def _not_utf8(path, byte: int, offset: int) -> StageError:
    return StageError(f"{path} is not UTF-8 text (invalid byte 0x{byte:02x} at offset {offset}): "
                      "convert it to UTF-8 or rerun the previous stage")


def read_documents(path: str | Path) -> Iterator[list[str]]:
    """documents(read_utf8(path)), read a line at a time: memory of a document, not of the file."""
    return _documents(_utf8_lines(path))


PIECE_CHARS = 2_000_000   # a task's text at a time (read_pieces): its memory, about 60 MB, whatever the file's


def read_pieces(path: str | Path, chars: int) -> Iterator[str]:
    """read_utf8(path) in pieces of whole documents, each cut at the first blank line after
    `chars` characters: memory of a piece, not of the file (a web part is 64 MB)."""
    piece: list[str] = []
    length = 0
    for line in _utf8_lines(path):
        line = line.replace("\r\n", "\n")
        piece.append(line)
        length += len(line)
        if length >= chars and not line.strip():
            yield "".join(piece)
            piece, length = [], 0
    if piece:
        yield "".join(piece)


def _utf8_lines(path: str | Path) -> Iterator[str]:
    offset = 0
    with open(path, "rb") as fh:
        try:
            for raw in fh:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _not_utf8(path, raw[exc.start], offset + exc.start) from None
                yield line[1:] if offset == 0 and line.startswith("\ufeff") else line
                offset += len(raw)
        except OSError as exc:   # a read error names no file; read in pieces, it comes while the output is open
            if exc.filename is None:
                exc.filename = str(path)
            raise


def documents(text: str) -> Iterator[list[str]]:
    """The documents of `text`: runs of non-blank lines (stripped), split at blank lines."""
    return _documents(text.split("\n"))


def _documents(lines: Iterable[str]) -> Iterator[list[str]]:
    doc: list[str] = []
    for line in lines:
        line = line.strip()
        if line:
            doc.append(line)
        elif doc:
            yield doc
            doc = []
    if doc:
        yield doc


def format_documents(docs: Iterable[list[str]]) -> str:
    """Documents as text: lines joined by "\\n", one blank line between documents, a final "\\n"."""
    text = "\n\n".join("\n".join(d) for d in docs if d)
    return text + "\n" if text else ""


WEIGHT_SEED = 7919   # the weight's sampling hash differs from the held-out hash of the same seed


def doc_bytes(doc: list[str]) -> bytes:
    """A document's bytes as shard hashes and writes them: its lines joined by "\\n"."""
    return "\n".join(doc).encode("utf-8")


def doc_hash(data: bytes, seed: int) -> int:
    """A 64-bit hash of a document's bytes under `seed` (independent of order and process)."""
    key = seed.to_bytes(8, "little", signed=True)
    return int.from_bytes(hashlib.blake2b(data, key=key, digest_size=8).digest(), "little")


def is_test(h: int, test_fraction: float) -> bool:
    """Whether hash `h` falls below the fraction (shard: held out; weights: sampled)."""
    return h < test_fraction * 2.0 ** 64


def copies_of(data: bytes, seed: int, weight: float) -> int:
    """Training copies of a document of a source with `weight`: floor(weight), plus one more
    when a seeded hash of its text falls below the fraction (0.5: about half the documents)."""
    whole, frac = divmod(weight, 1.0)
    return int(whole) + (frac > 0 and is_test(doc_hash(data, seed + WEIGHT_SEED), frac))
