"""The faults the operating system reports on the data path, as one `Error:` line.

A full disk, a quota, a read-only or failing filesystem, a permission or a file removed while a
run goes on are not bugs: the user gets one line naming the file, the stage (and task) and what
to do, and finished work stays for the rerun. Other OSErrors (and every other exception) keep
their traceback: they are ours to fix. What happened and what to do come from the table the
trainer uses too (common/os_errors.py), with the pipeline's flags in its remedies (REMEDY).

Usage:
    with reported("vocab"):                      # a data-path OSError -> StageError, one line
        build_vocab(...)
    if is_data_error(exc): raise StageError(describe(exc, "encode", task="shard_3")) from None
    exc.where = "(on the Dask worker on host-7)" # said after the file (survives pickling)
    name_the_file(exc)                           # in a worker: a read's EIO gets its file name
"""
from __future__ import annotations

import contextlib
import errno
import io
import os
from collections.abc import Callable, Iterator

from common.os_errors import Remedy, fault_errno, what_happened, what_to_do

from .errors import StageError

# The pipeline's words in the common table's remedies (common/os_errors.py).
REMEDY = Remedy(where="--output (or --data-dir)",
                free=" (`pipeline clean --keep ...` removes the folders you no longer need)",
                remake=" or rerun the stage that writes it")


def is_data_error(exc: BaseException) -> bool:
    """An OSError of the data path that the table knows (any other keeps its traceback)."""
    return fault_errno(exc) is not None


def full_disk_advice() -> str:
    """What to do about a full disk, in the pipeline's words (the runner's free-space check)."""
    return what_to_do(errno.ENOSPC, REMEDY)


def name_the_file(exc: BaseException) -> None:
    """A failed read(2) or write(2) of an open file raises an OSError without a file name: take
    the name of the open file the innermost frame of the traceback holds. Call it where the
    traceback is (a worker, before its exception is pickled to the client)."""
    if not is_data_error(exc) or exc.filename is not None:
        return
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            if not isinstance(value, io.IOBase):
                continue
            # a bz2/gzip/lzma file names no file: the file object under it does
            name = getattr(value, "name", None) or getattr(getattr(value, "_fp", None), "name", None)
            if isinstance(name, (str, os.PathLike)):
                exc.filename = os.fspath(name)
                return


def describe(exc: OSError, stage: str | None = None, task: str | None = None) -> str:
    """One line: where (stage, task, file), what happened, what to do, that finished work is kept."""
    name_the_file(exc)
    code = fault_errno(exc)   # not exc.errno: h5py's failed write says it only in its text
    name = errno.errorcode.get(code, str(code))
    files = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    where = " ".join(x for x in (stage, f"(task {task})" if task else None) if x)
    host = getattr(exc, "where", None)
    return (f"{where + ': ' if where else ''}{what_happened(code)} [{name}]"
            f"{' on ' + files if files else ''}{' ' + host if host else ''}: "
            f"{what_to_do(code, REMEDY)}; then rerun: finished work is kept")


@contextlib.contextmanager
def reported(stage: str | None, task: str | Callable[[], str | None] | None = None) -> Iterator[None]:
    """Turn a data-path OSError raised inside into a StageError line; let the rest through.
    `task` may be a function, asked only on a fault (the runner learns the task late)."""
    try:
        yield
    except OSError as exc:
        if not is_data_error(exc):
            raise
        raise StageError(describe(exc, stage, task() if callable(task) else task)) from None
