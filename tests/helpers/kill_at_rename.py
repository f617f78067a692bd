"""A `pipeline` CLI that SIGKILLs itself at its N-th os.replace (an atomic rename), for the
kill -9 resume tests: `python -c KILL_AT_NTH_RENAME N <pipeline args>`."""

KILL_AT_NTH_RENAME = r"""
import os, signal, sys
n, calls, real = int(sys.argv[1]), [0], os.replace
def replace(a, b):
    calls[0] += 1
    if calls[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(a, b)
os.replace = replace
from pipeline.cli import cli
cli(sys.argv[2:], prog_name="pipeline")
"""
