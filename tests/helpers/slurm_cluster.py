"""A real one-node Slurm for tests (scripts/slurm/local_cluster.sh), and jobs submitted to it.

    with local_slurm(tmp_dir) as env:          # skips where Slurm cannot run (no root, no packages)
        job = submit(script, env, "--nodes=1", args=[...], cwd=repo)   # sbatch: the job id
        rc = wait_for(job, env)                               # its exit code, once it ended
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCAL_CLUSTER = ROOT / "scripts" / "slurm" / "local_cluster.sh"


def _free_port_pair() -> int:
    """A port p with p and p + 1 free (slurmctld, slurmd): test sessions side by side each
    start a cluster of their own."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        with contextlib.suppress(OSError), socket.socket() as s:
            s.bind(("", port + 1))
            return port
    raise RuntimeError("no two consecutive free ports")


def why_no_slurm() -> str | None:
    if os.geteuid() != 0:
        return "the local Slurm needs root (munged and slurmd); CI runs as root"
    missing = [c for c in ("slurmctld", "slurmd", "munged", "sbatch") if shutil.which(c) is None]
    if missing:
        return f"{', '.join(missing)} not installed: apt-get install slurm-wlm munge (.ci/run does)"
    return None


@contextlib.contextmanager
def local_slurm(folder: Path):
    """Start the cluster with its files in `folder`; yield the environment its clients need."""
    reason = why_no_slurm()
    if reason:
        pytest.skip(reason)
    env = dict(os.environ, WIKI2BERT_SLURM_DIR=str(folder),
               WIKI2BERT_SLURM_PORT=str(_free_port_pair()))
    res = subprocess.run([str(LOCAL_CLUSTER), "start"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    env["SLURM_CONF"] = str(folder / "slurm.conf")
    try:
        yield env
    finally:
        subprocess.run([str(LOCAL_CLUSTER), "stop"], env=env, capture_output=True, timeout=120)


def submit(script, env, *options, args=(), cwd=None) -> str:
    """sbatch OPTIONS SCRIPT ARGS; returns the job id."""
    res = subprocess.run(["sbatch", "--parsable", *options, str(script), *map(str, args)],
                         env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().split(";")[0]


def job_state(job: str, env) -> tuple[str, int | None]:
    """(state, exit code or None while running) from scontrol."""
    res = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True, text=True)
    state = re.search(r"JobState=(\S+)", res.stdout)
    code = re.search(r"ExitCode=(\d+):(\d+)", res.stdout)
    if state is None:
        return "GONE", None
    done = state.group(1) not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING")
    return state.group(1), (int(code.group(1)) if done and code else None)


def wait_for(job: str, env, timeout: float = 180, until=None) -> int:
    """Wait until the job ended (or `until()` is true: then -1); its exit code."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if until is not None and until():
            return -1
        state, code = job_state(job, env)
        if code is not None:
            return code
        time.sleep(0.2)
    subprocess.run(["scancel", job], env=env)
    raise AssertionError(f"job {job} still {state} after {timeout} s")
