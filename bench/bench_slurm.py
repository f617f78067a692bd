"""The pipeline on the local Slurm in one allocation (scripts/slurm/pipeline_dask.sbatch: a Dask
scheduler, `srun` workers) against the local process pool, on the same dump. Prints a table.

Usage (root, Debian's slurm-wlm and munge, ../shared/data present):
    .venv/bin/python bench/bench_slurm.py                      # uk at 16 MB of XML, 2 pairs
    .venv/bin/python bench/bench_slurm.py --mb 64 --pairs 3 --workers 2   # bench/README.md

Each run is bench_scale.py's measured run (the same stages and options, every task's own CPU
seconds traced, one fresh process per run): locally with --workers pool processes, and on Slurm
as the `pipeline` of pipeline_dask.sbatch (a stand-in virtual environment whose bin/pipeline is
the measured run; python and dask are the real ones), submitted with --cpus-per-task=--workers
to a cluster this bench starts (scripts/slurm/local_cluster.sh) and stops. The measured run waits
until every worker joined before its first stage; the seconds from sbatch to then are the job's
start-up (queue, scheduler, workers), reported apart. Runs take turns at going first; the
overhead (slurm / local - 1) is raw and per second of task CPU, as bench_scale.overhead().
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import STAGES, child, measure, overhead  # noqa: E402

LOCAL_CLUSTER = ROOT / "scripts" / "slurm" / "local_cluster.sh"
SBATCH = ROOT / "scripts" / "slurm" / "pipeline_dask.sbatch"


def job_child() -> None:
    """Inside the job (as bin/pipeline of the stand-in venv): wait for every worker, then the
    measured run on the allocation's scheduler."""
    from distributed import Client

    spec = json.loads(os.environ["BENCH_SPEC"])
    spec["scheduler"] = os.environ["WIKI2BERT_SCHEDULER"]
    with Client(scheduler_file=spec["scheduler"]) as client:
        client.wait_for_workers(spec["workers"], timeout=300)
    print(json.dumps({"ready_at": time.time()}), flush=True)
    child(spec)


def stand_in_venv(work: Path) -> Path:
    """WORK/venv: bin/python and bin/dask are this environment's, bin/pipeline the measured run."""
    venv = work / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    real = Path(sys.executable).parent
    for name in ("python", "dask"):
        link = venv / "bin" / name
        link.unlink(missing_ok=True)
        link.symlink_to(real / name)
    run = venv / "bin" / "pipeline"
    run.write_text(f"#!/bin/sh\nexec {real / 'python'} {Path(__file__).resolve()} --job-child\n")
    run.chmod(0o755)
    return venv


def on_slurm(spec: dict, env: dict, work: Path) -> dict:
    log, trace = work / "job.out", work / "run.trace"
    shutil.rmtree(spec["data"], ignore_errors=True)
    trace.unlink(missing_ok=True)
    spec = {**spec, "executor": "dask", "trace": str(trace)}
    job_env = dict(env, BENCH_SPEC=json.dumps(spec), WIKI2BERT_VENV=str(stand_in_venv(work)),
                   OMP_NUM_THREADS="1",
                   # the workers unpickle the tasks' wrapper, bench_scale.traced_call
                   PYTHONPATH=os.pathsep.join([str(ROOT / "bench"), str(ROOT)]))
    start = time.time()
    res = subprocess.run(["sbatch", "--parsable", "--wait", f"--output={log}",
                          f"--cpus-per-task={spec['workers']}", str(SBATCH),
                          "--data-dir", spec["data"]], env=job_env, cwd=ROOT, capture_output=True,
                         text=True)
    if res.returncode:
        raise SystemExit(f"Error: the Slurm job failed:\n{res.stderr}\n{log.read_text()[-3000:]}")
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    shutil.rmtree(spec["data"], ignore_errors=True)
    return {**lines[-1], "startup": lines[0]["ready_at"] - start}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=16, help="MB of XML in the dump")
    ap.add_argument("--lang", default="uk", choices=["uk", "vi"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=2, help="runs of each executor, in turns")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "wiki2bert_bench_slurm")
    ap.add_argument("--job-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.job_child:
        return job_child()
    from scale_dumps import SHARED, build

    if not (SHARED / f"{args.lang}wiki.xml.xz").is_file():
        print(f"skipped: {SHARED} is not present")
        return
    if os.geteuid() != 0:
        print("skipped: the local Slurm needs root")
        return
    work = args.work
    dump = build(work, args.lang, args.mb)
    env = dict(os.environ, WIKI2BERT_SLURM_DIR=str(work / "slurm"))
    subprocess.run([str(LOCAL_CLUSTER), "start"], env=env, check=True, capture_output=True)
    env["SLURM_CONF"] = str(work / "slurm" / "slurm.conf")
    runs = []
    try:
        for turn in range(args.pairs):
            for executor in (("local", "slurm") if turn % 2 == 0 else ("slurm", "local")):
                spec = {"data": str(work / "run"), "lang": args.lang, "workers": args.workers,
                        "dump": str(dump), "executor": "local", "stages": list(STAGES)}
                r = measure(spec) if executor == "local" else on_slurm(spec, env, work)
                runs.append({**r, "executor": executor, "turn": turn})
                print(f"{executor}: {sum(r['seconds'].values()):.1f} s", file=sys.stderr, flush=True)
    finally:
        subprocess.run([str(LOCAL_CLUSTER), "stop"], env=env, capture_output=True)
    report(runs, args)


def report(runs: list[dict], args) -> None:
    xml = runs[0]["xml_mb"]
    print(f"\n{args.lang} {xml:.0f} MB of XML, {args.workers} workers: seconds per stage, one row per run")
    print("| executor | " + " | ".join(STAGES) + " | total s | CPU s | task CPU s | job start-up s |")
    print("|---" * (len(STAGES) + 5) + "|")
    for r in runs:
        cpu = sum(r["client_cpu"].values()) + sum(r["worker_cpu"].values())
        print(f"| {r['executor']} | " + " | ".join(f"{r['seconds'][s]:.1f}" for s in STAGES)
              + f" | {sum(r['seconds'].values()):.1f} | {cpu:.0f}"
              + f" | {sum(r['task_cpu'].values()):.0f} | {r.get('startup', 0):.1f} |")
    pairs = [(s, loc) for s in runs if s["executor"] == "slurm"
             for loc in runs if loc["executor"] == "local" and loc["turn"] == s["turn"]]
    print("\nSlurm (one allocation) against the local pool, slurm / local - 1 in %, median over pairs")
    print("| task CPU | wall | CPU | wall per task CPU | CPU per task CPU | job start-up s |")
    print("|---|---|---|---|---|---|")
    o = [overhead(s, loc) for s, loc in pairs]
    keys = ("speed", "wall", "cpu", "wall_per_task", "cpu_per_task")
    cells = [statistics.median(x[k] for x in o) for k in keys]
    print("| " + " | ".join(f"{(c - 1) * 100:+.0f}" for c in cells)
          + f" | {statistics.median(s['startup'] for s, _ in pairs):.1f} |")

if __name__ == "__main__":
    main()
