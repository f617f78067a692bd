"""Reading and writing the text stages' files: UTF-8, documents separated by one blank line.

Usage:
    text = read_utf8(path)                    # StageError naming the file and byte if not UTF-8
    for lines in documents(text): ...         # each document as its list of non-blank lines
    write_documents(path, docs)               # "\n".join per doc, "\n\n" between, final "\n"
    out_name(input_root, path)                # flat output name: "AA/wiki_00" -> "AA_wiki_00.txt"
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from .stage import StageError, atomic_open


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
    text = "\n\n".join("\n".join(d) for d in docs if d)
    return text + "\n" if text else ""


def write_documents(path: str | Path, docs: Iterable[list[str]]) -> int:
    """Write `docs` atomically; return the bytes written."""
    data = format_documents(docs).encode("utf-8")
    with atomic_open(path, "wb") as fh:
        fh.write(data)
    return len(data)


def out_name(root: Path, path: Path) -> str:
    """A flat file name for `path` under `root` that keeps the input's name."""
    rel = path.relative_to(root) if path != root and path.is_relative_to(root) else Path(path.name)
    name = "_".join(rel.parts)
    return name if name.endswith(".txt") else name + ".txt"


def resolve_io(data_dir, lang: str, input, output, upstream: str, stage: str) -> tuple[Path, list[Path], Path]:
    """The input root, its text files and the output folder of a text stage."""
    from .stage import list_text_files, require_stage_output, stage_dir

    if input is None:
        in_root = stage_dir(data_dir, lang, upstream)
        require_stage_output(in_root, upstream)
    else:
        in_root = Path(input)
    files = list_text_files(in_root)
    out_dir = Path(output) if output is not None else stage_dir(data_dir, lang, stage)
    if in_root.is_dir() and out_dir.resolve() == in_root.resolve():
        raise StageError(f"--output {out_dir} is the input folder: choose another --output")
    return (in_root if in_root.is_dir() else in_root.parent), files, out_dir

