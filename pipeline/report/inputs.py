"""What the report reads: the finished stages' manifests and bounded samples of their outputs.

Only finished outputs are read (a folder whose manifest.json exists), as every stage does;
a stage that has not run is simply absent from the report. Samples are bounded (documents
spread over the files, the first rows of HDF5 files), so a whole Wikipedia reports in seconds.

Usage:
    data = ReportInputs.of(Path("data/uk"))
    data.manifest("filter")["summary"]["rejected"]
    docs = sample_documents(data.folder("filter"), max_docs=5000)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.manifest import read_manifest
from pipeline.core.registry import BY_NAME
from pipeline.text.documents import documents, read_utf8

SAMPLE_DOCUMENTS = 5000


@dataclass
class ReportInputs:
    lang_dir: Path
    manifests: dict = field(default_factory=dict)       # stage name -> manifest
    encodings: list = field(default_factory=list)       # (hdf5_... folder, manifest), by name

    @classmethod
    def of(cls, lang_dir: Path) -> ReportInputs:
        data = cls(Path(lang_dir))
        for name, stage in BY_NAME.items():
            if stage.output:
                m = read_manifest(data.lang_dir / stage.output)
                if m is not None:
                    data.manifests[name] = m
        for folder in sorted(data.lang_dir.glob("hdf5_*")):
            m = read_manifest(folder)
            if m is not None and folder.is_dir():
                data.encodings.append((folder, m))
        return data

    def folder(self, stage: str) -> Path:
        return self.lang_dir / BY_NAME[stage].output

    def manifest(self, stage: str) -> dict | None:
        return self.manifests.get(stage)

    def summary(self, stage: str) -> dict:
        return (self.manifests.get(stage) or {}).get("summary") or {}

    @property
    def empty(self) -> bool:
        return not self.manifests and not self.encodings


def text_files(folder: Path, pattern: str = "*.txt") -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file() and not p.name.startswith("."))


def sample_documents(folder: Path, max_docs: int = SAMPLE_DOCUMENTS,
                     pattern: str = "*.txt") -> list[list[str]]:
    """Up to `max_docs` documents, the first ones of every file in turn (the files are dump
    order, so the sample spreads over the whole corpus without reading all of it)."""
    files = text_files(folder, pattern)
    if not files:
        return []
    per_file = max(1, math.ceil(max_docs / len(files)))
    docs: list[list[str]] = []
    for path in files:
        for i, doc in enumerate(documents(read_utf8(path))):
            if i >= per_file:
                break
            docs.append(doc)
        if len(docs) >= max_docs:
            break
    return docs[:max_docs]
