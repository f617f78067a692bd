"""A `pipeline` CLI that meets a fault at its N-th os.replace (an atomic rename), so the fault
lands at a chosen point of a stage (after some tasks are finished):

    python -c KILL_AT_NTH_RENAME N <pipeline args>            # SIGKILL itself (kill -9 tests)
    python -c FAULT_AT_NTH_RENAME ACTION N <pipeline args>     # the fault matrix's faults

ACTION is `kill`; `fill:PATH` (another writer fills the disk: PATH grows until the kernel says
ENOSPC, then the stage goes on); `ro:MOUNTPOINT` (the filesystem goes read-only under the stage,
as ext4's errors=remount-ro does: root only); `eio` (every read(2)/pread(2) from then on fails
with EIO through libfiu: run under `fiu-run -x` so its POSIX wrappers are preloaded). Faults
from the N-th rename on, not from the start: the stage's imports and its checks of the input
have run, so the fault hits its data, not Python loading a module. N = 0: before the CLI starts
(a full or read-only disk from the start: a stage whose only write is its last).
"""

FAULT_AT_NTH_RENAME = r"""
import os, signal, subprocess, sys
action, n, calls, real = sys.argv[1], int(sys.argv[2]), [0], os.replace

def fill(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"\0" * (1 << 16))
    except OSError:   # ENOSPC: the disk is full now; a few bytes at a time take the rest
        try:
            while True:
                os.write(fd, b"\0" * 512)
        except OSError:
            pass
    finally:
        os.close(fd)

def fault():
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action.startswith("fill:"):
        fill(action[5:])
    elif action.startswith("ro:"):
        subprocess.run(["mount", "-o", "remount,ro", action[3:]], check=True)
    elif action == "eio":
        import ctypes, errno
        # the instance fiu-run's preloaded wrappers ask. Its malloc wrapper can deadlock with
        # an allocator's own thread (pyarrow's jemalloc): stages import pyarrow only for Parquet
        fiu = ctypes.CDLL("libfiu.so.0")
        for name in (b"posix/io/rw/read", b"posix/io/rw/pread", b"posix/io/rw/readv"):
            fiu.fiu_enable(name, 1, ctypes.c_void_p(errno.EIO), 0)
    else:
        raise SystemExit(f"unknown fault {action}")

def replace(a, b):
    calls[0] += 1
    if calls[0] == n:
        fault()
    return real(a, b)
os.replace = replace
from pipeline.cli import cli
if n == 0:   # the fault before the stage starts (a stage whose one write is its last),
    import importlib   # once the stage's code is loaded
    from pipeline.core.registry import BY_NAME
    stage = next(a for a in sys.argv[3:] if a in BY_NAME)
    importlib.import_module(BY_NAME[stage].module)
    if stage == "report":
        import pipeline.report.build
    fault()
cli(sys.argv[3:], prog_name="pipeline")
"""

KILL_AT_NTH_RENAME = "import sys; sys.argv.insert(1, 'kill')\n" + FAULT_AT_NTH_RENAME
