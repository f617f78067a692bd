"""The stage contract shared by every pipeline stage.

A stage reads its predecessor's finished output (the directory holds a `manifest.json`) and
writes into its own directory under DATA_DIR/LANG/. Work is split into tasks (a file, a
shard); each task writes to a temporary name, renames atomically and leaves a done marker, and
the stage writes its manifest last, so the manifest's presence means the output is complete.
A rerun with the same options skips finished tasks; a rerun with changed options is refused
unless `force=True`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

log = logging.getLogger("pipeline")

MANIFEST = "manifest.json"
STATE_DIR = ".stage"  # options of the run in progress and one done marker per task

# Wikipedia language codes: "hu", "simple", "zh-min-nan", "be-x-old", "zh_yue" (dbname form).
_LANG_RE = re.compile(r"^[a-z][a-z0-9]{1,11}(?:[-_][a-z0-9]{1,11}){0,3}$")

# Stage directory names under DATA_DIR/LANG (DESIGN.md).
STAGE_DIRS = {
    "download": "download",
    "extract": "extracted",
    "format": "formatted",
    "split": "sentences",
    "filter": "filtered",
    "vocab": "vocab",
    "shard": "sharded",
}


class StageError(ValueError):
    """A user-facing problem: the message says what is wrong and what to do (one line)."""


def validate_lang(lang: str) -> str:
    """Return `lang` if it is a Wikipedia language code, else raise StageError (never a path)."""
    if not isinstance(lang, str) or not _LANG_RE.match(lang):
        raise StageError(
            f"--lang {lang!r} is not a Wikipedia language code: use the code of the wiki, "
            "e.g. hu, uk, vi, zh, simple, zh-min-nan"
        )
    return lang


def lang_dir(data_dir: str | os.PathLike, lang: str) -> Path:
    return Path(data_dir) / validate_lang(lang)


def stage_dir(data_dir: str | os.PathLike, lang: str, stage: str) -> Path:
    return lang_dir(data_dir, lang) / STAGE_DIRS[stage]


def default_workers(workers: int | None) -> int:
    if workers is None or workers <= 0:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    return workers


# ---------------------------------------------------------------------------------------------
# Atomic writes

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
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


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


def file_sha256(path: str | os.PathLike, bufsize: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(bufsize):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Inputs: a finished upstream stage, or any file / folder the user names


def read_manifest(directory: str | os.PathLike) -> dict | None:
    p = Path(directory) / MANIFEST
    if not p.is_file():
        return None
    with open(p, encoding="utf-8") as fh:
        return json.load(fh)


def require_stage_output(directory: str | os.PathLike, upstream: str) -> dict:
    """Return the manifest of a finished `upstream` stage in `directory`, or explain what to run."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        if directory.exists():
            raise StageError(
                f"{directory} holds no finished '{upstream}' output (no {MANIFEST}): "
                f"run or finish `pipeline {upstream}` first, or pass --input"
            )
        raise StageError(
            f"{directory} does not exist: run `pipeline {upstream}` first, or pass --input"
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


# ---------------------------------------------------------------------------------------------
# The run of a stage: options check, task markers, manifest last


@dataclass
class StageRun:
    """Bookkeeping for one stage writing into `output`.

    Usage:
        run = StageRun("format", out_dir, options, input_fp, force=force)
        if run.complete:            # finished earlier with the same options and inputs
            return run.manifest["summary"]
        for task in tasks:
            if run.task_done(task_id): continue
            ... write with atomic_open ...
            run.mark_done(task_id, {"lines": n})
        run.finish(summary={...}, outputs=[...])
    """

    name: str
    output: Path
    options: dict
    input_fingerprint: str = ""
    force: bool = False
    manifest: dict | None = field(default=None, init=False)
    started: float = field(default_factory=time.time, init=False)

    def __post_init__(self) -> None:
        self.output = Path(self.output)
        self.options = json.loads(json.dumps(self.options, sort_keys=True, default=str))
        wanted = {"stage": self.name, "options": self.options, "input": self.input_fingerprint}
        existing = read_manifest(self.output)
        if existing is not None:
            same = {k: existing.get(k) for k in wanted} == wanted
            if same and not self.force:
                self.manifest = existing
                return
            if not self.force:
                raise StageError(self._changed_message(existing))
            self._wipe()  # --force redoes a finished stage, whatever its options were
        state_file = self.output / STATE_DIR / "run.json"
        if state_file.is_file():
            with open(state_file, encoding="utf-8") as fh:
                state = json.load(fh)
            if {k: state.get(k) for k in wanted} != wanted:
                if not self.force:
                    raise StageError(self._changed_message(state, unfinished=True))
                self._wipe()
        elif self.output.exists() and any(self.output.iterdir()) and self.force:
            self._wipe()
        self._remove_stale_temporaries()
        (self.output / STATE_DIR / "done").mkdir(parents=True, exist_ok=True)
        write_json_atomic(state_file, wanted)

    def _remove_stale_temporaries(self) -> None:
        """Temporary files a killed run left behind (atomic_path names them `.NAME.*.tmp`)."""
        if self.output.is_dir():
            for tmp in self.output.rglob(".*.tmp"):
                if tmp.is_file():
                    tmp.unlink()

    def _changed_message(self, old: dict, unfinished: bool = False) -> str:
        diffs = []
        old_opts = old.get("options") or {}
        for k in sorted(set(old_opts) | set(self.options)):
            if old_opts.get(k) != self.options.get(k):
                diffs.append(f"{k}: {old_opts.get(k)!r} -> {self.options.get(k)!r}")
        if old.get("input") != self.input_fingerprint:
            diffs.append("its input changed")
        what = "an unfinished run" if unfinished else "a finished run"
        return (
            f"{self.output} holds {what} of '{self.name}' with other settings "
            f"({'; '.join(diffs) or 'different stage'}): rerun with --force to redo it, "
            "or choose another --output"
        )

    def _wipe(self) -> None:
        if self.output.exists():
            shutil.rmtree(self.output)
        self.output.mkdir(parents=True, exist_ok=True)

    @property
    def complete(self) -> bool:
        return self.manifest is not None

    def _marker(self, task_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", str(task_id))
        return self.output / STATE_DIR / "done" / f"{safe}.json"

    def task_done(self, task_id: str) -> bool:
        return self._marker(task_id).is_file()

    def task_info(self, task_id: str) -> dict:
        with open(self._marker(task_id), encoding="utf-8") as fh:
            return json.load(fh)

    def mark_done(self, task_id: str, info: dict | None = None) -> None:
        write_json_atomic(self._marker(task_id), info or {})

    def finish(self, summary: dict, outputs: Iterable[str | os.PathLike] = (), extra: dict | None = None) -> dict:
        """Write the manifest (options, input fingerprint, outputs with sizes and checksums)."""
        out_list = []
        for p in outputs:
            p = Path(p)
            out_list.append({
                "path": str(p.relative_to(self.output)) if p.is_relative_to(self.output) else str(p),
                "bytes": p.stat().st_size,
                "sha256": file_sha256(p),
            })
        manifest = {
            "stage": self.name,
            "options": self.options,
            "input": self.input_fingerprint,
            "summary": summary,
            "outputs": out_list,
            "seconds": round(time.time() - self.started, 3),
        }
        if extra:
            manifest.update(extra)
        write_json_atomic(self.output / MANIFEST, manifest)
        shutil.rmtree(self.output / STATE_DIR, ignore_errors=True)
        self.manifest = manifest
        return manifest


# ---------------------------------------------------------------------------------------------
# Parallel work and reporting


def progress(iterable=None, **kwargs):
    """A tqdm bar on stderr that stays quiet under `pipeline -q` (logging above INFO)."""
    from tqdm import tqdm

    quiet = not log.isEnabledFor(logging.INFO)
    kwargs["disable"] = kwargs.get("disable", False) or quiet
    kwargs.setdefault("leave", False)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(iterable, **kwargs)


def parallel_map(func: Callable, items: Sequence, workers: int, desc: str | None = None,
                 unit: str = "task") -> Iterator:
    """Yield func(item) for each item, in input order, over `workers` processes, with a bar.

    Results come back in the order of `items` whatever the number of workers, so callers that
    write or merge in that order produce the same bytes for any `--workers`.
    """
    items = list(items)
    workers = max(1, min(default_workers(workers), len(items) or 1))
    bar = progress(total=len(items), desc=desc, unit=unit, disable=desc is None or len(items) <= 1)
    try:
        if workers == 1:
            for item in items:
                yield func(item)
                bar.update()
        else:
            import multiprocess

            with multiprocess.get_context("fork").Pool(workers) as pool:
                for result in pool.imap(func, items, chunksize=1):
                    yield result
                    bar.update()
    finally:
        bar.close()


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.1f} GB"


def report(stage: str, summary: dict, skipped: bool = False) -> None:
    """The one-line summary a stage prints at its end."""
    parts = []
    for k, v in summary.items():
        if isinstance(v, bool):
            parts.append(f"{k} {'yes' if v else 'no'}")
        elif isinstance(v, dict):
            inner = ", ".join(f"{kk} {vv:,}" if isinstance(vv, int) else f"{kk} {vv}" for kk, vv in v.items())
            parts.append(f"{k}: {inner or 'none'}")
        elif k.endswith("bytes") and isinstance(v, (int, float)):
            parts.append(f"{k.replace('_bytes', '').replace('bytes', '') or 'size'} {human_bytes(v)}")
        elif isinstance(v, float):
            parts.append(f"{k} {v:.3g}")
        elif isinstance(v, int):
            parts.append(f"{k} {v:,}")
        else:
            parts.append(f"{k} {v}")
    prefix = f"{stage}: already done, nothing rewritten" if skipped else f"{stage}:"
    log.info("%s %s", prefix, "; ".join(parts) if not skipped else f"({'; '.join(parts)})")
