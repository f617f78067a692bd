"""Atomic writes: a temporary name beside the target, renamed over it only on success.

Usage:
    with atomic_open(path) as fh: fh.write(...)     # text; "wb" for bytes
    with atomic_path(path) as tmp: h5py.File(tmp, "w") ...
    write_json_atomic(path, obj)
    remove_stale_temporaries(folder)                 # what a killed run left behind

Temporary names are `.NAME.<random>.tmp`, unique per attempt, so two attempts at one task
(a retried or duplicated task) never write into each other's file.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it over `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as exc:
        if exc.filename is None:  # a failed write(2) names no file: the Error line names ours
            exc.filename = str(path)
        raise
    finally:
        # a full disk or an I/O error: no half-written temporary stays (on a filesystem gone
        # read-only it cannot go; the next run's remove_stale_temporaries takes it)
        with contextlib.suppress(OSError):
            tmp_path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8", **kw):
    """Open a temporary file beside `path` for writing; rename it over `path` on success."""
    binary = "b" in mode
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if binary else encoding, **kw) as fh:
            yield fh


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2, sort_keys=True)
        fh.write("\n")


def remove_stale_temporaries(folder: str | os.PathLike) -> None:
    """Temporary files a killed run left (atomic_path names them `.NAME.*.tmp`); never outputs."""
    folder = Path(folder)
    if folder.is_dir():
        for tmp in folder.rglob(".*.tmp"):
            if tmp.is_file():
                tmp.unlink()


def file_sha256(path: str | os.PathLike, bufsize: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(bufsize):
            h.update(chunk)
    return h.hexdigest()
