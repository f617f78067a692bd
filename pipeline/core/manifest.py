"""Manifests: a stage's `manifest.json` is written last, so its presence means the folder is
complete. Downstream stages read it, never a half-written folder.

Usage:
    manifest = require_stage_output(stage_dir(data_dir, lang, "split"), "split")
    fingerprint_inputs([folder_or_file, ...])     # what a rerun compares to skip or refuse
    file_sha256(path)                             # an output's checksum in the manifest
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from .errors import StageError

MANIFEST = "manifest.json"


def read_manifest(directory: str | os.PathLike) -> dict | None:
    p = Path(directory) / MANIFEST
    if not p.is_file():
        return None
    with open(p, encoding="utf-8") as fh:
        return json.load(fh)


def require_stage_output(directory: str | os.PathLike, upstream: str,
                         option: str = "--input") -> dict:
    """Return the manifest of a finished `upstream` stage in `directory`, or explain what to
    run (or which `option` names the files instead)."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        if directory.exists():
            raise StageError(
                f"{directory} holds no finished '{upstream}' output (no {MANIFEST}): "
                f"run or finish `pipeline {upstream}` first, or pass {option}"
            )
        raise StageError(
            f"{directory} does not exist: run `pipeline {upstream}` first, or pass {option}"
        )
    return manifest


def fingerprint_inputs(paths: Sequence[str | os.PathLike]) -> str:
    """A cheap identity of input files: an upstream manifest's hash, else names, sizes, mtimes."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths):
        if p.is_dir() and (p / MANIFEST).is_file():
            h.update(b"manifest:" + (p / MANIFEST).read_bytes())
            continue
        files = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
        for q in files:
            st = q.stat()
            h.update(f"{q}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def file_sha256(path: str | os.PathLike, bufsize: int = 1 << 20) -> str:
    """The sha256 of a file's bytes (hex), read a megabyte at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(bufsize):
            h.update(chunk)
    return h.hexdigest()
