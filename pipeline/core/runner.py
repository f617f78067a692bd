"""The stage runner: what every stage shares between "options given" and "manifest written".

A stage supplies its options, its tasks and the function that does one task; the runner
checks the options against an earlier run, skips finished tasks, hands the rest to the
executor (pipeline/core/executor.py), marks each task done as its result comes back, and at
the end writes the manifest (options, input fingerprint, outputs with sizes and checksums) and
prints the one-line summary. The manifest is written last, so its presence means the output is
complete; a rerun with the same options and inputs skips the stage, a rerun with changed ones
is refused unless `force=True` (which redoes the stage from scratch).

Usage:
    run = StageRun("format", out_dir, options, fingerprint_inputs([src]), force=force, workers=w)
    if run.complete:
        return run.skip()                       # "format: already done, ..." and the old summary
    tasks = [Task(name, (src, dst), outputs=(dst,)) for ...]
    infos = list(run.run_tasks(tasks, format_file, desc="format", unit="file"))
    return run.finish(summary, outputs=[...])   # manifest last, summary line, the summary

A task counts as done when its marker exists and every file the task wrote (recorded in the
marker) is still there; the marker holds the dict the task function returned.

`expected_bytes` (the stage's estimate of what it will write, from its input) is checked
against the free space of the output's disk before anything is written: one StageError line
when it will not fit, instead of a full disk halfway through.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.atomic import remove_stale_temporaries, write_json_atomic

from .errors import StageError
from .executor import Ready, make_executor
from .manifest import MANIFEST, file_sha256, read_manifest
from .os_errors import full_disk_advice, reported
from .report import human_bytes, progress, report

STATE_DIR = ".stage"  # options of the run in progress and one done marker per task
# The advice after "holds a run with other settings", where a wrapper passes --force its own way
# (recipes/pretrain.py: `make pretrain ... PRETRAIN_OPTS=--force`); unset: "rerun with --force"
FORCE_HINT_ENV = "WIKI2BERT_FORCE_HINT"
_FINISHED = object()  # stands in for the result of a task an earlier run finished


def check_free_space(stage: str, output: Path, expected_bytes: int) -> None:
    """StageError when the disk of `output` has less room than `expected_bytes` minus what the
    output folder already holds (a resumed run needs only the rest)."""
    if expected_bytes <= 0:
        return
    existing = output
    while not existing.exists():
        existing = existing.parent
    held = sum(p.stat().st_size for p in output.rglob("*") if p.is_file()) if output.is_dir() else 0
    needed = expected_bytes - held
    free = shutil.disk_usage(existing).free
    if needed > free:
        raise StageError(
            f"{stage} will write about {human_bytes(needed)} to {output} but only "
            f"{human_bytes(free)} are free: {full_disk_advice()}")


@dataclass(frozen=True)
class Task:
    """One unit of a stage's work: its marker name, the argument its function gets (paths,
    ranges, settings; never bulk text where a path will do) and the files it writes."""

    id: str
    arg: Any
    outputs: tuple[Path, ...] = ()


@dataclass
class StageRun:
    """Bookkeeping for one stage writing into `output`; see the module docstring."""

    name: str
    output: Path
    options: dict
    input_fingerprint: str = ""
    force: bool = False
    workers: int | None = None
    expected_bytes: int = 0
    rules: dict = field(default_factory=dict)  # the stage's rules version: other rules, redone
    manifest: dict | None = field(default=None, init=False)
    started: float = field(default_factory=time.time, init=False)

    def __post_init__(self) -> None:
        self.output = Path(self.output)
        self.options = json.loads(json.dumps(self.options, sort_keys=True, default=str))
        wanted = {"stage": self.name, "options": self.options, "input": self.input_fingerprint}
        if self.rules:
            wanted["rules"] = self.rules
            self._redo_if_other_rules()
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
        check_free_space(self.name, self.output, self.expected_bytes)
        remove_stale_temporaries(self.output)
        (self.output / STATE_DIR / "done").mkdir(parents=True, exist_ok=True)
        write_json_atomic(state_file, wanted)

    def _redo_if_other_rules(self) -> None:
        """Output (finished or not) made by other rules of this stage is removed, with a line."""
        state_file = self.output / STATE_DIR / "run.json"
        old = read_manifest(self.output)
        if old is None and state_file.is_file():
            with open(state_file, encoding="utf-8") as fh:
                old = json.load(fh)
        if old is not None and old.get("rules") != self.rules:
            logging.getLogger("pipeline").warning(
                "%s: %s was made by other rules (%s, now %s): redoing it", self.name, self.output,
                old.get("rules") or "older rules", self.rules)
            self._wipe()

    def _changed_message(self, old: dict, unfinished: bool = False) -> str:
        diffs = []
        old_opts = old.get("options") or {}
        for k in sorted(set(old_opts) | set(self.options)):
            if old_opts.get(k) != self.options.get(k):
                diffs.append(f"{k}: {old_opts.get(k)!r} -> {self.options.get(k)!r}")
        if old.get("input") != self.input_fingerprint:
            diffs.append("its input changed")
        what = "an unfinished run" if unfinished else "a finished run"
        # a wrapper (make pretrain) names its own way to pass --force
        how = os.environ.get(FORCE_HINT_ENV) or "rerun with --force to redo it, or choose another --output"
        return (f"{self.output} holds {what} of '{self.name}' with other settings "
                f"({'; '.join(diffs) or 'different stage'}): {how}")

    def _wipe(self) -> None:
        if self.output.exists():
            shutil.rmtree(self.output)
        self.output.mkdir(parents=True, exist_ok=True)

    @property
    def complete(self) -> bool:
        return self.manifest is not None

    @property
    def work_dir(self) -> Path:
        """A scratch folder for the run in progress (removed with the markers at the end)."""
        path = self.output / STATE_DIR / "work"
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- task markers ----------------------------------------------------------------------

    def _marker(self, task_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", str(task_id))
        return self.output / STATE_DIR / "done" / f"{safe}.json"

    def task_done(self, task_id: str) -> bool:
        """The task has a marker and every file it wrote is still there."""
        marker = self._marker(task_id)
        if not marker.is_file():
            return False
        with open(marker, encoding="utf-8") as fh:
            written = json.load(fh).get("written_files", [])
        return all((self.output / p).is_file() for p in written)

    def task_info(self, task_id: str) -> dict:
        with open(self._marker(task_id), encoding="utf-8") as fh:
            info = json.load(fh)
        info.pop("written_files", None)
        return info

    def once(self, task_id: str, work: Callable[[], dict]) -> dict:
        """A task of the stage's own process: work()'s record, or the record of an earlier run
        that finished it (a tokenizer kind's training steps: vocab/kinds/base.py's Steps)."""
        if not self.task_done(task_id):
            self.mark_done(task_id, work())
        return self.task_info(task_id)

    def mark_done(self, task_id: str, info: dict | None = None, outputs: Iterable[Path] = ()) -> None:
        """Record a finished task, with those of `outputs` it wrote (they must stay); a task
        that learns its outputs as it goes (ingest's parts) lists them in info["written_files"]."""
        info = dict(info or {})
        outputs = [*outputs, *info.pop("written_files", ())]
        written = [os.path.relpath(p, self.output) for p in outputs if Path(p).is_file()]
        write_json_atomic(self._marker(task_id), {**info, "written_files": written})

    # -- running work ----------------------------------------------------------------------

    def map(self, func: Callable[[Any], Any], items: Sequence, desc: str | None = None,
            unit: str = "task") -> Iterator:
        """func(item) for each item on the executor, in order, with a bar (no markers: for work
        whose results the stage keeps itself)."""
        bar = progress(total=len(items), desc=desc, unit=unit, disable=desc is None or len(items) <= 1)
        with bar, reported(self.name):   # a worker's full disk, ...: one line
            for result in make_executor(self.workers).map(func, items):
                yield result
                bar.update()

    def run_tasks(self, tasks: Iterable[Task], func: Callable[[Any], dict], desc: str | None = None,
                  unit: str = "task", total: int | None = None) -> Iterator[tuple[Task, dict]]:
        """(task, info) for every task, in task order: finished tasks from their markers, the
        others run by `func(task.arg)` on the executor and marked done here as they return.
        `tasks` may be a stream (the runner keeps only a bounded number in flight)."""
        if total is None and isinstance(tasks, Sequence):
            total = len(tasks)
        order: list[Task] = []

        def jobs():
            for task in tasks:
                order.append(task)
                yield Ready(_FINISHED) if self.task_done(task.id) else (func, task.arg)

        bar = progress(total=total, desc=desc, unit=unit, disable=desc is None or (total or 0) <= 1)
        done = 0   # results come in task order: a fault met now is task order[done]'s
        with bar, reported(self.name, task=lambda: order[done].id if done < len(order) else None):
            for result in make_executor(self.workers).run(jobs(), size_hint=total):
                task = order[done]
                if result is _FINISHED:
                    result = self.task_info(task.id)
                else:
                    self.mark_done(task.id, result, task.outputs)
                order[done] = None  # type: ignore[call-overload]  # memory: the task's argument
                done += 1
                bar.update()
                yield task, result

    # -- the end ---------------------------------------------------------------------------

    def skip(self) -> dict:
        """The stage finished earlier with these options and inputs: say so, return its summary."""
        assert self.manifest is not None
        report(self.name, self.manifest["summary"], skipped=True)
        return self.manifest["summary"]

    def finish(self, summary: dict, outputs: Iterable[str | os.PathLike] = (),
               extra: dict | None = None, shown: dict | None = None,
               checksums: dict | None = None) -> dict:
        """Write the manifest (options, input fingerprint, outputs with sizes and checksums),
        remove the markers, print the summary line; return the summary (with `shown`, figures
        for the screen that the manifest does not keep). `checksums`: {path: sha256} the stage
        computed already, not read again."""
        # What an attempt killed mid-task left (a lost cluster worker; its task ran again).
        remove_stale_temporaries(self.output)
        out_list = []
        for p in outputs:
            p = Path(p)
            out_list.append({
                "path": str(p.relative_to(self.output)) if p.is_relative_to(self.output) else str(p),
                "bytes": p.stat().st_size,
                "sha256": (checksums or {}).get(p) or file_sha256(p),
            })
        manifest = {
            "stage": self.name,
            "options": self.options,
            "input": self.input_fingerprint,
            **({"rules": self.rules} if self.rules else {}),
            "summary": summary,
            "outputs": out_list,
            "seconds": round(time.time() - self.started, 3),
        }
        if extra:
            manifest.update(extra)
        write_json_atomic(self.output / MANIFEST, manifest)
        shutil.rmtree(self.output / STATE_DIR, ignore_errors=True)
        self.manifest = manifest
        summary = {**summary, **(shown or {})}
        report(self.name, summary)
        return summary

    def seconds(self) -> float:
        """Seconds since the run started, for the summary."""
        return round(time.time() - self.started, 2)
