"""OS faults on the trainer's data and output paths, as one line that says what to do; and the
free-space checks that find a too-small disk before the hours are spent.

    msg = os_error_message(exc, where="--output_dir", also=" or lower --keep_checkpoints")
    exc = as_os_error(exc, path)       # torch's or safetensors' write failure -> an OSError
    check_free_space(folder, need_bytes, "2 checkpoints of 1.2 GB", where="--output_dir")

A disk that fills, a quota, a read-only filesystem, a permission or a failing disk: each
errno gets its own words and remedy. torch.save on a full disk does not raise an OSError but
`RuntimeError: [enforce fail at inline_container.cc:...] . unexpected pos ...` (or
`PytorchStreamWriter failed writing file`), safetensors a SafetensorError "... (os error 28)";
as_os_error turns them into the OSError they stand for (torch's: ENOSPC when the disk is
nearly full after it, EIO otherwise).
"""
from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

# the faults a user can act on; any other errno is reported with the system's own words
WHAT = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the filesystem is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "input/output error (a failing disk or network filesystem)",
}
TORCH_WRITE_FAILURES = ("inline_container.cc", "PytorchStreamWriter failed writing file",
                        "unexpected pos")
# below this many free bytes after a failed write, the disk is taken to be what failed it
NEARLY_FULL = 1 << 20


class DiskSpaceError(ValueError):
    """Too little free space for what is about to be written (found before writing it)."""


def human(n: float) -> str:
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


def is_os_fault(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in WHAT


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
    what = WHAT.get(code) or (exc.strerror or str(exc)).strip()
    if code in (errno.ENOSPC, errno.EDQUOT):
        todo = f"free space there or put {where} on a larger disk{also}"
    elif code == errno.EROFS:
        todo = f"remount it read-write or choose {where} on a writable disk"
    elif code in (errno.EACCES, errno.EPERM):
        todo = f"give this user access to it or choose another {where}"
    elif code == errno.EIO:
        todo = "check the disk (dmesg, the storage's health) and copy the data to a sound one"
    else:
        todo = f"check {where}"
    return f"cannot use {file}: {what}; {todo}{then}"


def check_free_space(folder, need: int, what: str, *, where: str = "--output_dir",
                     also: str = "") -> None:
    """DiskSpaceError unless `folder`'s disk has `need` bytes free (`what` says for what)."""
    free = free_bytes(folder)
    if free < need:
        raise DiskSpaceError(f"the disk of {folder} has {human(free)} free, too little for "
                             f"{what} ({human(need)}): free space there or put {where} on a "
                             f"larger disk{also}")
