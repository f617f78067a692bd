"""scripts/slurm/local_cluster.sh: start gives an idle node that runs jobs (two tasks of an
srun), stop leaves no daemon behind."""
from __future__ import annotations

import os
import subprocess

import pytest

from tests.helpers.slurm_cluster import local_slurm, submit, wait_for

pytestmark = pytest.mark.slurm


def test_a_started_cluster_runs_a_job_and_stop_ends_every_daemon(tmp_path):
    folder = tmp_path / "cluster"
    with local_slurm(folder) as env:
        sinfo = subprocess.run(["sinfo", "--noheader", "--format=%T %c"], env=env,
                               capture_output=True, text=True, check=True).stdout.split()
        assert sinfo[0] == "idle" and int(sinfo[1]) >= 2
        script = tmp_path / "hello.sbatch"
        script.write_text("#!/bin/bash\nsrun --ntasks=2 bash -c 'echo task $SLURM_PROCID'\n")
        job = submit(script, env, "--ntasks=2", f"--output={tmp_path / 'hello.out'}")
        assert wait_for(job, env, timeout=60) == 0
        assert sorted((tmp_path / "hello.out").read_text().split("\n")[:2]) == ["task 0", "task 1"]
        pids = [int((folder / name).read_text()) for name in
                ("slurmctld.pid", "slurmd.pid", "munge/munged.pid")]
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}"), pid
