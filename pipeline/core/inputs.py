"""Where a stage reads and writes: --input/--output when given, else the registry's folders.

Usage:
    src = resolve_input(data_dir, lang, "split", input)      # --input, or the finished format/ output
    io = text_io(data_dir, lang, "split", input, output)     # for the text stages, see TextIO
    list_text_files(folder)                                  # sorted *.txt, hidden names skipped
    flat_name(root, root / "AA/wiki_00")                     # "AA_wiki_00.txt"
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import StageError
from .manifest import read_manifest, require_stage_output
from .registry import BY_NAME, stage_dir


def resolve_input(data_dir, lang: str, stage: str, input: str | os.PathLike | None) -> Path:
    """--input as given, else the finished output of the stage's upstream (StageError saying
    what to run when it is missing or unfinished)."""
    if input is not None:
        return Path(input)
    for preferred in BY_NAME[stage].prefers:   # split: the deduplicated mix, once there is one
        folder = stage_dir(data_dir, lang, preferred)
        if read_manifest(folder) is not None:
            return folder
    upstream = BY_NAME[stage].upstream[0]
    folder = stage_dir(data_dir, lang, upstream)
    require_stage_output(folder, upstream)
    return folder


def resolve_output(data_dir, lang: str, stage: str, output: str | os.PathLike | None) -> Path:
    return Path(output) if output is not None else stage_dir(data_dir, lang, stage)


def list_text_files(path: str | os.PathLike, pattern: str = "*.txt") -> list[Path]:
    """A file, or the sorted matching files under a folder (hidden and temporary names skipped)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise StageError(f"input {path} does not exist: check --input or run the previous stage")
    files = sorted(p for p in path.rglob(pattern) if p.is_file() and not p.name.startswith("."))
    if not files:
        raise StageError(f"input folder {path} holds no {pattern} files: check --input")
    return files


def flat_name(root: Path, path: Path, strip_suffixes: tuple[str, ...] = ()) -> str:
    """A flat .txt file name for `path` under `root` that keeps the input's name:
    `AA/wiki_00` -> `AA_wiki_00.txt` (the name travels through the later stages)."""
    rel = path.relative_to(root) if path != root and path.is_relative_to(root) else Path(path.name)
    name = "_".join(rel.parts)
    for suffix in strip_suffixes:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name if name.endswith(".txt") else name + ".txt"


@dataclass
class TextIO:
    """The inputs and output of a text stage."""

    source: Path        # what identifies the input: --input as given, or the upstream folder
    root: Path          # the folder the input files are named relative to
    files: list[Path]   # the input files, sorted
    output: Path        # the stage's output folder

    def input_bytes(self) -> int:
        """The input files' total size: what the text stages' disk estimate starts from."""
        return sum(f.stat().st_size for f in self.files)

    def tasks_out(self) -> list[tuple[Path, Path]]:
        """(input file, output file) pairs; StageError if two inputs map to one output name."""
        pairs = [(f, self.output / flat_name(self.root, f)) for f in self.files]
        if len({dst.name for _, dst in pairs}) != len(pairs):
            raise StageError(f"two input files map to the same output name under {self.root}: "
                             "give a folder whose files have distinct names")
        return pairs


def text_io(data_dir, lang: str, stage: str, input, output) -> TextIO:
    """The input files (one sentence or paragraph a line) and output folder of a text stage."""
    source = resolve_input(data_dir, lang, stage, input)
    files = list_text_files(source)
    out_dir = resolve_output(data_dir, lang, stage, output)
    if source.is_dir() and out_dir.resolve() == source.resolve():
        raise StageError(f"--output {out_dir} is the input folder: choose another --output")
    return TextIO(source, source if source.is_dir() else source.parent, files, out_dir)
