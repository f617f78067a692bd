"""Atomic writes: a temporary name beside the target, renamed over it only on success, so that
no reader (a later stage, a resumed run, a user's script) ever sees half a file.

Usage:
    with atomic_open(path) as fh: fh.write(...)      # text; "wb" for bytes
    with atomic_path(path) as tmp: h5py.File(tmp, "w") ...
    write_json_atomic(path, obj)                      # indented, sorted keys, a newline at the end
    write_text_atomic(path, lambda fh: fh.write(...)) # text that a function writes
    remove_stale_temporaries(folder)                  # what a killed run left behind
    remove_stale_temporaries(folder, "report.html")   # ... of one file
    follow_umask(path)                                # a library's 0600 file given the umask's mode

Temporary names are `.NAME.<random>.tmp`, unique per attempt, so two attempts at one task (a
retried or duplicated task) never write into each other's file, and a killed writer leaves
only a name that remove_stale_temporaries (and the fault tests) recognise. The parent folder
is created; the file gets the mode the umask gives (0666 & ~umask), not mkstemp's 0600.

Who writes what (each caller's bytes are those it wrote before this module existed):
    pipeline: manifests, task markers, run.json, rejections.json, the vocab's JSON files:
        write_json_atomic(path, obj), the defaults (indent 2, sort_keys, UTF-8 kept as is)
    trainer/runtime/output_dir.py: hparams.json, model_config.json: the defaults
    trainer/runtime/logs.py: train_log.jsonl cut back on resume, git_diff.patch: write_text_atomic
    vocab/kinds: each kind's own files (vocab.txt, tokenizer_config.json: the defaults where a
        stage writes it, keys in transformers' order (sort_keys=False) where an export does;
        tokenizer.json, special_tokens_map.json)
    trainer/finetune/results.py: results.json and each seed's record: the defaults;
        predictions: write_text_atomic(path, write)
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

# Read once at import: asking later means setting the umask for a moment, which a thread
# creating a file at that moment would see.
_UMASK = os.umask(0)
os.umask(_UMASK)
TEMPORARY_GLOB = ".*.tmp"


def follow_umask(path: str | os.PathLike) -> None:
    """Give `path` the mode a new file gets from the umask (0666 & ~umask): for a file written
    through mkstemp (0600), ours or a library's (safetensors writes model.safetensors so)."""
    os.chmod(path, 0o666 & ~_UMASK)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success rename it over `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    follow_umask(tmp_path)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as exc:
        if exc.filename is None:  # a failed write(2) names no file: the error line names ours
            exc.filename = str(path)
        raise
    finally:
        # a full disk or an I/O error: no half-written temporary stays (on a filesystem gone
        # read-only it cannot go; the next run's remove_stale_temporaries takes it)
        with contextlib.suppress(OSError):
            tmp_path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8",
                **kw: Any) -> Iterator[IO]:
    """Open a temporary file beside `path` for writing; rename it over `path` on success."""
    binary = "b" in mode
    with atomic_path(path) as tmp, open(tmp, mode, encoding=None if binary else encoding, **kw) as fh:
        yield fh


def write_json_atomic(path: str | os.PathLike, obj: Any, *, sort_keys: bool = True,
                      indent: int | None = 2) -> None:
    """`obj` as JSON (non-ASCII characters as they are, a newline at the end), atomically."""
    with atomic_open(path) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
        fh.write("\n")


def write_text_atomic(path: str | os.PathLike, write: Callable[[IO[str]], Any],
                      encoding: str = "utf-8") -> None:
    """Call write(fh) on a temporary text file beside `path`, then rename it to `path`."""
    with atomic_open(path, "w", encoding=encoding) as fh:
        write(fh)


def remove_stale_temporaries(folder: str | os.PathLike, name: str | None = None) -> None:
    """Temporary files a killed run left (atomic_path names them `.NAME.*.tmp`); never outputs.
    With `name`, only those of that one file, in `folder` itself."""
    folder = Path(folder)
    if folder.is_dir():
        found = folder.glob(f".{name}.*.tmp") if name is not None else folder.rglob(TEMPORARY_GLOB)
        for tmp in found:
            if tmp.is_file():
                tmp.unlink()

