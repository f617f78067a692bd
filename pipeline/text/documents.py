"""The text stages' files: UTF-8, one line per paragraph or sentence, documents separated by
one blank line.

Usage:
    text = read_utf8(path)                    # StageError naming the file and byte if not UTF-8
    for lines in documents(text): ...         # each document as its list of non-blank lines
    format_documents(docs)                    # "\n".join per doc, "\n\n" between, final "\n"
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline.core.errors import StageError


def read_utf8(path: str | Path) -> str:
    """The text of `path` with "\\r\\n" made "\\n"; a one-line StageError if it is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StageError(
            f"{path} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset {exc.start}): "
            "convert it to UTF-8 or rerun the previous stage"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def documents(text: str) -> Iterator[list[str]]:
    """The documents of `text`: runs of non-blank lines (stripped), split at blank lines."""
    doc: list[str] = []
    for line in text.split("\n"):
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
