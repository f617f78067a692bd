"""The pipeline on a real (local) Slurm, both ways of scripts/slurm/: one allocation
(pipeline_dask.sbatch: a Dask scheduler and srun workers) and dask-jobqueue
(pipeline_jobqueue.py, itself submitted with sbatch: its workers are Slurm jobs of their own).
Each gives shards, vocab and HDF5 byte-identical to a local run on the sample dump."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.slurm_cluster import ROOT, submit, wait_for
from tests.pipeline.test_dask_pipeline import every_output

pytestmark = pytest.mark.slurm
VENV_BIN = Path(sys.executable).parent
RUN = ["run", "--vocab-size", "600", "--encode", "64/10", "--dupe-factor", "1", "--num-shards", "2"]


def pipeline_args(data: Path, dump: Path) -> list[str]:
    return ["--data-dir", str(data), "--lang", "hu", "-q", *RUN[:1], "--dump", str(dump), *RUN[1:]]


def job_env(slurm):
    return dict(slurm, PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", OMP_NUM_THREADS="1",
                WIKI2BERT_VENV=str(Path(sys.prefix)))


@pytest.fixture(scope="module")
def local_outputs(sample_dump, tmp_path_factory):
    """Every output of a local run (one worker process)."""
    data = tmp_path_factory.mktemp("local") / "data"
    args = pipeline_args(data, sample_dump)
    subprocess.run([sys.executable, "-m", "pipeline", "--workers", "1", *args], check=True,
                   cwd=ROOT, capture_output=True, timeout=300)
    found = every_output(data / "hu")
    assert any(k.endswith(".hdf5") for k in found) and "vocab/spm.model" in found
    return found


def assert_same_outputs(local, data: Path):
    cluster = every_output(data / "hu")
    assert sorted(cluster) == sorted(local)
    assert [k for k in local if local[k] != cluster[k]] == []


@pytest.mark.slow
def test_pipeline_in_one_allocation_gives_the_local_bytes(slurm, sample_dump, local_outputs,
                                                          tmp_path):
    data, log = tmp_path / "data", tmp_path / "job.out"
    job = submit(ROOT / "scripts" / "slurm" / "pipeline_dask.sbatch", job_env(slurm),
                 f"--output={log}", "--cpus-per-task=2", args=pipeline_args(data, sample_dump),
                 cwd=ROOT)
    assert wait_for(job, slurm, timeout=240) == 0, log.read_text()[-3000:]
    assert "1 node(s) x 2 Dask worker(s)" in log.read_text()
    assert_same_outputs(local_outputs, data)
    assert (data / ".dask" / f"scheduler-{job}.log").read_text().count("Register worker") == 2
    assert not list((data / ".dask").glob("*.json"))   # the scheduler file went with the job


@pytest.mark.slow
def test_pipeline_with_dask_jobqueue_workers_gives_the_local_bytes(slurm, sample_dump,
                                                                   local_outputs, tmp_path):
    """The node is full at first (a job holds all its CPUs but the head job's): the head says
    which worker job it waits for and why, then the node frees and the pipeline runs."""
    pytest.importorskip("dask_jobqueue")
    data, log = tmp_path / "data", tmp_path / "head.out"
    cpus = int(subprocess.run(["sinfo", "--noheader", "--format=%c"], env=slurm,
                              capture_output=True, text=True, check=True).stdout.split()[0])
    blocker = subprocess.run(["sbatch", "--parsable", f"--cpus-per-task={cpus - 1}", "--output=/dev/null",
                              "--wrap", "sleep 600"], env=slurm, capture_output=True, text=True,
                             check=True).stdout.strip()
    job = submit(ROOT / "scripts" / "slurm" / "pipeline_jobqueue.py", job_env(slurm),
                 f"--output={log}", args=["--jobs", "1", "--cores", "2", "--memory", "2GB",
                                          "--say-every", "30", "--",
                                          *pipeline_args(data, sample_dump)], cwd=ROOT)
    try:
        said = lambda: log.is_file() and "pending (Resources)" in log.read_text()  # noqa: E731
        assert wait_for(job, slurm, timeout=60, until=said) == -1, log.read_text()
    finally:
        subprocess.run(["scancel", blocker], env=slurm, check=True)
    assert wait_for(job, slurm, timeout=240) == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert "waiting for Dask workers from Slurm: " in text and "1 Slurm job(s) x 2" in text, text
    assert_same_outputs(local_outputs, data)
    assert list((data / ".dask").glob("*.out")), "the worker job wrote no output file"


@pytest.mark.parametrize("script, before", [("pipeline_dask.sbatch", []),
                                            ("pipeline_jobqueue.py", ["--"])])
def test_pipeline_job_with_a_missing_dump_fails_in_one_line(slurm, tmp_path, script, before):
    log = tmp_path / "job.out"
    job = submit(ROOT / "scripts" / "slurm" / script, job_env(slurm), f"--output={log}",
                 args=[*before, *pipeline_args(tmp_path / "data", tmp_path / "no.xml.bz2")],
                 cwd=ROOT)
    assert wait_for(job, slurm, timeout=60) != 0
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --dump ") and "does not exist" in lines[0]
