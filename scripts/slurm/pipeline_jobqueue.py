#!/usr/bin/env python3
#SBATCH --job-name=wiki2bert-jobqueue
#SBATCH --ntasks=1
#SBATCH --output=%x-%j.out
"""The pipeline on Slurm with dask-jobqueue: the Dask workers are Slurm jobs of their own
(`SLURMCluster`), the scheduler and `pipeline` run here (a login node, or a small job of its
own: `sbatch` this file). Outputs are byte-identical to a local run's (docs/cluster.md).

Usage (from the repository root; the checkout and --data-dir on a filesystem every node sees):
    python scripts/slurm/pipeline_jobqueue.py --jobs 4 --cores 32 --memory 64GB \\
        --queue cpu --account myproject -- --data-dir /shared/wiki --lang hu run
    sbatch --cpus-per-task=2 scripts/slurm/pipeline_jobqueue.py --jobs 4 ... -- ...

Everything after `--` is `pipeline`'s own arguments. Each worker job runs one worker process per
core (one thread each: the stages are pure Python) with this Python and scripts/dask-workers.yaml.
While no worker has joined, a line says which Slurm jobs are waited for and why (squeue's
reason: Resources, Priority, ...), when that changes and every --say-every seconds. Needs the [cluster] extra
(dask-jobqueue).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(os.environ.get("WIKI2BERT_HOME") or os.environ.get("SLURM_SUBMIT_DIR") or Path.cwd())


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=1, help="worker jobs (nodes) [1]")
    p.add_argument("--cores", type=int, default=1, help="cores per worker job = worker processes [1]")
    p.add_argument("--memory", default="2GB", help="memory per worker job [2GB]")
    p.add_argument("--walltime", default="04:00:00", help="time limit of a worker job [04:00:00]")
    p.add_argument("--queue", help="Slurm partition of the worker jobs [the default one]")
    p.add_argument("--account", help="Slurm account of the worker jobs")
    p.add_argument("--interface", help="network interface of the scheduler and workers "
                   "(ib0, eth1) where the default address is not the cluster's network")
    p.add_argument("--log-dir", default=None, help="the worker jobs' output files [DATA_DIR/.dask]")
    p.add_argument("--say-every", type=float, default=30.0,
                   help="seconds between the lines saying what is waited for [30]")
    p.add_argument("pipeline_args", nargs=argparse.REMAINDER,
                   help="-- then pipeline's arguments (global options, then the stage)")
    args = p.parse_args(argv)
    if args.pipeline_args[:1] == ["--"]:
        args.pipeline_args = args.pipeline_args[1:]
    if not args.pipeline_args:
        p.error("no pipeline command given: add -- --data-dir DIR --lang hu run")
    return args


def flag_value(pipeline_args, name: str) -> str | None:
    """The value of --NAME V or --NAME=V among pipeline's arguments."""
    for i, a in enumerate(pipeline_args):
        if a == f"--{name}" and i + 1 < len(pipeline_args):
            return pipeline_args[i + 1]
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


def input_problem(pipeline_args) -> str | None:
    """What is wrong with the inputs, checked before any Slurm job is submitted."""
    dump = flag_value(pipeline_args, "dump")
    if dump and not Path(dump).is_file():
        return f"--dump {dump} does not exist: is it on the shared filesystem?"
    data = Path(flag_value(pipeline_args, "data-dir") or "data")
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--data-dir {data} cannot be written ({exc.strerror})"
    return None


def worker_jobs(cluster) -> str:
    """'job 12 pending (Resources), job 13 running (its workers starting)' from squeue."""
    ids = [job.job_id for job in cluster.workers.values() if getattr(job, "job_id", None)]
    if not ids:
        return "no worker job submitted yet"
    res = subprocess.run(["squeue", "--noheader", "--format=%i %T %r", "--jobs", ",".join(ids)],
                         capture_output=True, text=True)
    said = []
    for line in res.stdout.splitlines():
        job, state, reason = (line.split(maxsplit=2) + ["", ""])[:3]
        if state == "RUNNING":
            said.append(f"job {job} running (its workers starting)")
        else:
            said.append(f"job {job} {state.lower()}" + (f" ({reason})" if reason not in ("", "None") else ""))
    return ", ".join(said) or f"Slurm job(s) {', '.join(ids)}"


def wait_for_workers(client, cluster, say_every: float) -> None:
    """Until one worker joined; a line when what is waited for changes, else every `say_every` s."""
    last, said = -say_every, ""
    while not client.scheduler_info()["workers"]:
        now = worker_jobs(cluster)
        if now != said or time.monotonic() - last >= say_every:
            print(f"waiting for Dask workers from Slurm: {now}", flush=True)
            last, said = time.monotonic(), now
        time.sleep(0.5)


def main(argv=None) -> int:
    args = parse(argv)
    os.chdir(REPO)
    try:
        from dask_jobqueue import SLURMCluster
        from distributed import Client
    except ImportError:
        print("Error: dask-jobqueue is not installed: pip install -e '.[cluster]'", file=sys.stderr)
        return 1
    problem = input_problem(args.pipeline_args)
    if problem:
        print(f"Error: {problem}", file=sys.stderr)
        return 1
    data = Path(flag_value(args.pipeline_args, "data-dir") or "data")
    logs = Path(args.log_dir) if args.log_dir else data / ".dask"
    logs.mkdir(parents=True, exist_ok=True)
    config = os.environ.get("DASK_CONFIG") or str(REPO / "scripts" / "dask-workers.yaml")
    cluster = SLURMCluster(
        cores=args.cores, processes=args.cores, memory=args.memory, walltime=args.walltime,
        queue=args.queue, account=args.account, python=sys.executable, interface=args.interface,
        log_directory=str(logs), local_directory=os.environ.get("TMPDIR", "/tmp"),
        job_script_prologue=[f"export DASK_CONFIG={config}", f"cd {REPO}"],
        scheduler_options={"dashboard_address": ":0"})
    try:
        cluster.scale(jobs=args.jobs)
        with Client(cluster) as client:
            wait_for_workers(client, cluster, args.say_every)
            print(f"wiki2bert: pipeline on {args.jobs} Slurm job(s) x {args.cores} Dask worker(s)",
                  flush=True)
            env = dict(os.environ, WIKI2BERT_SCHEDULER=cluster.scheduler_address, DASK_CONFIG=config)
            return subprocess.run([sys.executable, "-m", "pipeline", *args.pipeline_args],
                                  env=env).returncode
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
