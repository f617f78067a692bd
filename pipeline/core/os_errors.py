"""The faults the operating system reports on the data path, as one `Error:` line.

A full disk, a quota, a read-only or failing filesystem, a permission or a file removed while a
run goes on are not bugs: the user gets one line naming the file, the stage (and task) and what
to do, and finished work stays for the rerun. Other OSErrors (and every other exception) keep
their traceback: they are ours to fix.

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
import re
from typing import Callable, Iterator

from .errors import StageError

_OTHER_DISK = "or give --output (or --data-dir) on another disk"
ADVICE = {
    errno.ENOSPC: "the disk is full: free space there (`pipeline clean --keep ...` removes the "
                  f"folders you no longer need) {_OTHER_DISK}",
    errno.EDQUOT: "your disk quota is used up: free space within it (`pipeline clean --keep ...`) "
                  f"{_OTHER_DISK}",
    errno.EROFS: f"the filesystem is read-only: remount it read-write {_OTHER_DISK}",
    errno.EACCES: "permission denied: fix the permissions of the file or its folder "
                  "(chmod/chown), or give --output (or --data-dir) where you may write",
    errno.EIO: "an I/O error (a failing disk or network filesystem): check the disk (dmesg) and "
               "copy the data to a sound one if it is failing",
    errno.ENOENT: "no such file: check the path, or, if it was removed while the run went on, "
                  "restore it or rerun the stage that writes it",
}
ADVICE[errno.EPERM] = ADVICE[errno.EACCES]
DATA_ERRNOS = frozenset(ADVICE)
_H5_ERRNO = re.compile(r"errno = (\d+)")  # h5py reports a failed write as text: "errno = 28"


def data_errno(exc: BaseException) -> int | None:
    """The errno of a data-path fault, or None for any other exception."""
    if not isinstance(exc, OSError):
        return None
    code = exc.errno
    if code is None:
        found = _H5_ERRNO.search(str(exc))
        code = int(found.group(1)) if found else None
    return code if code in DATA_ERRNOS else None


def is_data_error(exc: BaseException) -> bool:
    return data_errno(exc) is not None


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
    """One line: where (stage, task, file), what the system said, what to do, that work is kept."""
    name_the_file(exc)
    code = data_errno(exc)
    name = errno.errorcode.get(code, str(code))
    files = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    what = os.strerror(code)   # h5py's own text of a failed write runs over many lines
    where = " ".join(x for x in (stage, f"(task {task})" if task else None) if x)
    return (f"{where + ': ' if where else ''}{what} [{name}]"
            f"{' on ' + files if files else ''}{' ' + exc.where if getattr(exc, 'where', None) else ''}: "
            f"{ADVICE[code]}; then rerun: finished work is kept")


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
