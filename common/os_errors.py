"""The operating system's faults in words: what happened and what to do, one table for the
pipeline and the trainer; and the free-space checks that find a too-small disk before the
hours are spent.

A full disk, a quota, a read-only or failing filesystem, a permission or a file removed while
a run goes on are not bugs: the user gets one line that says what happened and what to do.
Each caller puts its own flags into the remedies (a Remedy): the pipeline names
`--output (or --data-dir)` and `pipeline clean --keep`, the trainer `--output_dir` and
`--keep_checkpoints`.

Usage:
    fault_errno(exc)                   # the errno of a fault in FAULTS (h5py's text too), or None
    what_happened(code)                # "the disk is full"
    what_to_do(code, Remedy(where="--output_dir", also=", or lower --keep_checkpoints"))
    msg = os_error_message(exc, where="--output_dir", also=", or lower --keep_checkpoints")
    exc = as_os_error(exc, path)       # torch's or safetensors' write failure -> an OSError
    check_free_space(folder, need_bytes, "2 checkpoints of 1.2 GB", where="--output_dir")

torch.save on a full disk does not raise an OSError but `RuntimeError: [enforce fail at
inline_container.cc:...] . unexpected pos ...` (or `PytorchStreamWriter failed writing file`),
safetensors a SafetensorError "... (os error 28)"; as_os_error turns them into the OSError they
stand for (torch's: ENOSPC when the disk is nearly full after it, EIO otherwise).
"""
from __future__ import annotations

import errno
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Remedy:
    """The words a caller puts into the table's remedies: its own flags and commands."""

    where: str          # the flag that chooses the folder: "--output_dir", "--output (or --data-dir)"
    free: str = ""      # how to make room, said after "free space there"
    also: str = ""      # one more remedy for a full disk: ", or lower --keep_checkpoints"
    remake: str = ""    # how to bring back a file gone mid-run: " or rerun the stage that writes it"


@dataclass(frozen=True)
class Fault:
    """One errno: what happened, and what to do as a template of Remedy's fields."""

    what: str
    todo: str

    def todo_for(self, remedy: Remedy) -> str:
        return self.todo.format(where=remedy.where, free=remedy.free, also=remedy.also,
                                remake=remedy.remake)


_FULL = Fault("the disk is full", "free space there{free} or put {where} on a larger disk{also}")
_DENIED = Fault("permission denied", "fix the permissions of the file or its folder (chmod/chown) "
                                     "or choose another {where}")
# The faults a user can act on; any other errno is a bug of ours (the pipeline keeps its
# traceback) or said in the system's own words (os_error_message).
FAULTS = {
    errno.ENOSPC: _FULL,
    errno.EDQUOT: Fault("the disk quota is exceeded",
                        "free space within the quota{free} or put {where} on another disk{also}"),
    errno.EROFS: Fault("the filesystem is read-only",
                       "remount it read-write or choose {where} on a writable disk"),
    errno.EACCES: _DENIED,
    errno.EPERM: _DENIED,
    errno.EIO: Fault("input/output error (a failing disk or network filesystem)",
                     "check the disk (dmesg, the storage's health) and copy the data to a sound one"),
    errno.ENOENT: Fault("no such file", "check the path, or, if it was removed while the run went "
                                        "on, restore it{remake}"),
}
# The faults of the disk itself: a missing file is not one (the trainer says which file its
# own way: a shard that is not there is a wrong --input_dir).
DISK_FAULTS = frozenset(FAULTS) - {errno.ENOENT}

TORCH_WRITE_FAILURES = ("inline_container.cc", "PytorchStreamWriter failed writing file",
                        "unexpected pos")
# below this many free bytes after a failed write, the disk is taken to be what failed it
NEARLY_FULL = 1 << 20
_H5_ERRNO = re.compile(r"errno = (\d+)")  # h5py reports a failed write as text: "errno = 28"


class DiskSpaceError(ValueError):
    """Too little free space for what is about to be written (found before writing it)."""


def fault_errno(exc: BaseException) -> int | None:
    """The errno of an OSError that FAULTS knows (read from h5py's text when the exception has
    none), or None for any other exception."""
    if not isinstance(exc, OSError):
        return None
    code = exc.errno
    if code is None:
        found = _H5_ERRNO.search(str(exc))
        code = int(found.group(1)) if found else None
    return code if code in FAULTS else None


def what_happened(code: int) -> str:
    return FAULTS[code].what


def what_to_do(code: int, remedy: Remedy) -> str:
    return FAULTS[code].todo_for(remedy)


def is_os_fault(exc: BaseException) -> bool:
    """An OSError of the disk itself (full, quota, read-only, permission, I/O error)."""
    return isinstance(exc, OSError) and exc.errno in DISK_FAULTS


def human(n: float) -> str:
    """Bytes in binary units: "512 B", "1.5 GiB"."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def free_bytes(folder) -> int:
    """Free bytes (for this user) on the filesystem of `folder` or its nearest existing parent."""
    p = Path(folder).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def as_os_error(exc: BaseException, path) -> BaseException:
    """torch.save's or safetensors' failure on `path` as the OSError it stands for; an OSError
    without a file name gets `path`; other errors unchanged."""
    if isinstance(exc, OSError):
        if exc.filename is None and exc.errno is not None and path is not None:
            return OSError(exc.errno, os.strerror(exc.errno), str(path))
        return exc
    code = re.search(r"\(os error (\d+)\)", str(exc))   # safetensors (Rust's io::Error)
    if code:
        return OSError(int(code.group(1)), os.strerror(int(code.group(1))), str(path))
    if not any(s in str(exc) for s in TORCH_WRITE_FAILURES):
        return exc
    full = free_bytes(Path(path).parent) < NEARLY_FULL
    code = errno.ENOSPC if full else errno.EIO
    reason = os.strerror(code) if full else "write failed (disk over quota or failing?)"
    return OSError(code, reason, str(path))


def os_error_message(exc: OSError, path=None, *, where: str = "--output_dir", also: str = "",
                     then: str = "") -> str:
    """One line: the file, what happened, what to do. `where` is the flag naming the folder,
    `also` another remedy (", or lower --keep_checkpoints"), `then` how to go on after."""
    file = exc.filename or path or "a file"
    code = exc.errno
    if code in FAULTS:
        what, todo = what_happened(code), what_to_do(code, Remedy(where=where, also=also))
    else:
        what, todo = (exc.strerror or str(exc)).strip(), f"check {where}"
    return f"cannot use {file}: {what}; {todo}{then}"


def check_free_space(folder, need: int, what: str, *, where: str = "--output_dir",
                     also: str = "") -> None:
    """DiskSpaceError unless `folder`'s disk has `need` bytes free (`what` says for what)."""
    free = free_bytes(folder)
    if free < need:
        raise DiskSpaceError(f"the disk of {folder} has {human(free)} free, too little for "
                             f"{what} ({human(need)}): "
                             f"{what_to_do(errno.ENOSPC, Remedy(where=where, also=also))}")
