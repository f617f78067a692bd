"""Scale benchmark: the whole pipeline on large dumps, on the local pool and on a local Dask
cluster with the same number of workers; and extract alone, 1 and 2 workers, on a multistream
dump and on the single-stream form of the same XML. Prints tables.

Usage:
    .venv/bin/python bench/bench_scale.py                       # quick: uk at 16 and 32 MB of XML
    .venv/bin/python bench/bench_scale.py --only pipeline --sizes 512 1024 2048 --work /tmp/w2b_scale
    .venv/bin/python bench/bench_scale.py --only pipeline --sizes 1024 2048 --pairs 2 --work /tmp/w2b_scale
    .venv/bin/python bench/bench_scale.py --only extract --sizes 64 --runs 3
    .venv/bin/python bench/bench_scale.py --langs uk vi --executors local dask --workers 2

Dumps: bench/scale_dumps.py (the real uk/vi pages repeated with new ids and titles; cached in
--work). Pipeline: download --dump, extract, format, split, filter --keep-repeats (the copies
repeat each other), shard, vocab (32k), encode 128/20 and 512/80, in one fresh process per run
(`--executors dask`: inside `use_scheduler("local", workers)`, so a LocalCluster of --workers
processes, started once for all the stages and counted in no stage). Reported per stage: wall
seconds, XML MB/s per core (XML MB / seconds / workers, the same XML for every stage so that the
rows add up), and for the run the CPU seconds of all its processes (the Dask workers' are
counted when the cluster closes) and the peak RSS of the main process and of the largest worker
(getrusage: RUSAGE_SELF, RUSAGE_CHILDREN; a LocalCluster's scheduler lives in the main process),
and the task CPU seconds: what the tasks themselves took, each timed in the thread that ran it
(TracedExecutor), whichever executor. --pairs N runs each executor N times per dump, taking
turns at going first; then a table compares Dask with the local pool pair by pair, raw and per
second of task CPU (overhead() says why), and stage by stage. Every run's figures, with the CPU
seconds and peak RSS after each stage, are also appended to WORK/results.jsonl. Extract: medians
over --runs of wall and CPU seconds; speed-up = seconds with 1 worker / seconds with 2; the
CPU-time model (cpu_model) gives the seconds on free cores, which the wall clock of a shared machine
does not. Extract alone runs on the first of --sizes. After the pipeline table: the projection
for a full huwiki and enwiki on 2, 16 and 64 cores (projection_table says how).
Skips (with a message) when ../shared/data is absent.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

STAGES = ("extract", "format", "split", "filter", "shard", "vocab", "encode 128/20", "encode 512/80")


def traced_call(trace: str, func, arg):
    """A task, timed: the CPU seconds of the thread that ran it, appended to `trace`. A worker
    process also runs Dask's event loop or the pool's plumbing; this counts the task alone."""
    import time

    start = time.thread_time()
    result = func(arg)
    with open(trace, "a") as fh:   # one short append per task: whole lines, whatever the writer
        fh.write(f"{time.thread_time() - start:.4f}\n")
    return result


def traced_tasks(trace: str | None) -> list[float]:
    """The CPU seconds of every task timed so far, in the order they finished."""
    if not trace or not Path(trace).is_file():
        return []
    return [float(x) for x in Path(trace).read_text().split()]


class TracedExecutor:
    """The stage's executor, its jobs wrapped in traced_call (one wrapper per function, so that
    the Dask executor still ships each function once)."""

    def __init__(self, inner, trace: str):
        self.inner, self.trace, self.wrapped = inner, trace, {}

    def _wrap(self, func):
        import functools

        return self.wrapped.setdefault(id(func), (func, functools.partial(traced_call, self.trace, func)))[1]

    def map(self, func, items):
        return self.inner.map(self._wrap(func), items)

    def run(self, jobs, size_hint=None):
        from pipeline.core.executor import Ready

        return self.inner.run((job if isinstance(job, Ready) else (self._wrap(job[0]), job[1]) for job in jobs),
                              size_hint=size_hint)


def child(spec: dict) -> None:
    """One measured run in this (fresh) process; prints a JSON line."""
    import contextlib
    import logging
    import resource
    import time

    logging.basicConfig(level=logging.WARNING)
    from pipeline.core.executor import use_scheduler
    from pipeline.stages.download import download
    from pipeline.stages.encode import encode
    from pipeline.stages.extract import extract
    from pipeline.stages.filter import filter_documents
    from pipeline.stages.format import format_corpus
    from pipeline.stages.shard import shard
    from pipeline.stages.split import split
    from pipeline.stages.vocab import build_vocab

    data, lang, w = spec["data"], spec["lang"], spec["workers"]
    common = {"data_dir": data, "lang": lang, "workers": w}
    calls = {
        "extract": lambda: extract(**common),
        "format": lambda: format_corpus(**common),
        "split": lambda: split(**common),
        "filter": lambda: filter_documents(**common, drop_repeats=False),
        "shard": lambda: shard(**common),
        "vocab": lambda: build_vocab(**common, vocab_size=32000),
        "encode 128/20": lambda: encode(**common, max_seq=128, max_pred=20),
        "encode 512/80": lambda: encode(**common, max_seq=512, max_pred=80),
    }

    def cpu(who) -> float:
        ru = resource.getrusage(who)
        return ru.ru_utime + ru.ru_stime

    def workers_cpu(ex) -> float:
        """The pool's workers end with their stage (RUSAGE_CHILDREN); Dask's live on: ask them."""
        if ex is None:
            return cpu(resource.RUSAGE_CHILDREN)
        return sum(ex.client.run(cpu, resource.RUSAGE_SELF).values())

    if spec.get("trace"):   # every task's own CPU seconds, whichever executor runs it
        from pipeline.core import runner

        untraced = runner.make_executor
        runner.make_executor = lambda workers=None: TracedExecutor(untraced(workers), spec["trace"])

    stages = spec["stages"]
    seconds, summaries, client_cpu, worker_cpu, peak, task_cpu = {}, {}, {}, {}, {}, {}
    # a scheduler of its own (bench_slurm.py: the Slurm allocation's), else a LocalCluster
    cluster = (use_scheduler(spec.get("scheduler", "local"), w) if spec["executor"] == "dask"
               else contextlib.nullcontext())
    with cluster as ex:
        download(data_dir=data, lang=lang, dump=spec["dump"])
        for name in stages:
            t, c, k = time.perf_counter(), cpu(resource.RUSAGE_SELF), workers_cpu(ex)
            earlier = len(traced_tasks(spec.get("trace")))
            summaries[name] = calls[name]()
            task_cpu[name] = traced_tasks(spec.get("trace"))[earlier:]
            seconds[name] = time.perf_counter() - t
            client_cpu[name] = cpu(resource.RUSAGE_SELF) - c
            worker_cpu[name] = workers_cpu(ex) - k
            # peak RSS so far (MB): where it rises is the stage that needs the memory
            peak[name] = [resource.getrusage(who).ru_maxrss // 1024
                          for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {
        "seconds": seconds, "client_cpu": client_cpu, "worker_cpu": worker_cpu, "peak_so_far": peak,
        "task_cpu": {name: sum(t) for name, t in task_cpu.items()},
        "extract_tasks": task_cpu.get("extract", []),
        "xml_mb": summaries["extract"]["xml_bytes"] / 1e6,
        "documents": summaries["extract"]["documents"],
        "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
        "rss_main": me.ru_maxrss / 1024, "rss_worker": kids.ru_maxrss / 1024,
    }
    with open(Path(data).parent / "results.jsonl", "a") as fh:   # every run's figures, kept
        fh.write(json.dumps({**{k: spec[k] for k in ("lang", "workers", "executor", "dump")}, **result}) + "\n")
    print(json.dumps(result))


def measure(spec: dict) -> dict:
    if Path(spec["data"]).exists():
        shutil.rmtree(spec["data"])
    trace = Path(spec["data"] + ".trace")
    trace.unlink(missing_ok=True)
    res = subprocess.run([sys.executable, __file__, "--child", json.dumps({**spec, "trace": str(trace)})],
                         capture_output=True, text=True, cwd=ROOT)
    if res.returncode:
        raise SystemExit(f"Error: run {spec} failed:\n{res.stderr[-3000:]}")
    shutil.rmtree(spec["data"], ignore_errors=True)
    trace.unlink(missing_ok=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def cpu_model(run: dict, workers: int) -> float:
    """Extract's seconds on `workers` free cores from CPU times: the tasks in order, each to the
    first worker free (as the pool hands them out), beside the client's own CPU seconds (the
    reader of a single-stream dump; a pool of one runs the tasks in the client itself). On this
    shared VM the kernel's autogroup scheduling gives a session the same CPU share however many
    processes it runs, so wall seconds show a speed-up only when the other sessions are idle."""
    client = run["client_cpu"]["extract"]
    if workers == 1:
        return client
    free = [0.0] * workers
    for cpu in run["extract_tasks"]:
        i = free.index(min(free))
        free[i] += cpu
    # the client shares the cores with the workers: never less than all the CPU over the cores
    return max(client, max(free), (client + sum(run["extract_tasks"])) / workers)


def pipeline_table(args, work: Path) -> list[dict]:
    from scale_dumps import build

    print(f"\nwhole pipeline, {args.workers} workers (one row per run, executors in turns; seconds per "
          "stage, XML MB/s per core)")
    head = " | ".join(STAGES)
    print(f"| lang | XML MB | executor | {head} | total s | total MB/s/core | CPU s | task CPU s "
          "| peak RSS main MB | peak RSS worker MB |")
    print("|---" * (len(STAGES) + 9) + "|")
    runs = []
    for lang in args.langs:
        for mb in args.sizes:
            dump = build(work, lang, mb)
            for turn in range(args.pairs):
                # turns alternate which executor goes first: no executor always meets the same part
                # of the machine's drift
                for executor in (args.executors if turn % 2 == 0 else args.executors[::-1]):
                    r = measure({"data": str(work / "run"), "lang": lang, "workers": args.workers,
                                 "dump": str(dump), "executor": executor, "stages": list(STAGES)})
                    xml, w = r["xml_mb"], args.workers
                    cells = " | ".join(f"{r['seconds'][s]:.1f} ({xml / r['seconds'][s] / w:.1f})" for s in STAGES)
                    total = sum(r["seconds"].values())
                    print(f"| {lang} | {xml:.0f} | {executor} | {cells} | {total:.0f} | {xml / total / w:.2f} "
                          f"| {r['cpu']:.0f} | {sum(r['task_cpu'].values()):.0f} | {r['rss_main']:.0f} "
                          f"| {r['rss_worker']:.0f} |", flush=True)
                    runs.append({**r, "lang": lang, "executor": executor, "mb": mb, "turn": turn})
    return runs


def overhead(dask: dict, local: dict, stages=STAGES) -> dict:
    """Dask against the local pool in one pair of runs, over `stages`: raw ratios, and the same
    per second of task CPU. The tasks are the same work on both executors, so their CPU seconds
    measure how fast the machine was during each run; on this shared VM that drifts by tens of
    percent within minutes (the same extract: 187 to 222 task CPU-s), which raw ratios mistake for
    the executor's cost. Dividing by it leaves what the executor adds: its scheduler and event
    loops, and cores left idle between tasks."""
    def total(run, key):
        return sum(run[key][s] for s in stages)

    speed = total(dask, "task_cpu") / total(local, "task_cpu")
    wall = total(dask, "seconds") / total(local, "seconds")
    cpu = ((total(dask, "client_cpu") + total(dask, "worker_cpu"))
           / (total(local, "client_cpu") + total(local, "worker_cpu")))
    return {"speed": speed, "wall": wall, "cpu": cpu, "wall_per_task": wall / speed, "cpu_per_task": cpu / speed}


def overhead_table(runs: list[dict]) -> None:
    """Dask's cost over the local pool, per pair of runs and per stage (median over pairs)."""
    def pair_key(run):
        return run["lang"], run["mb"], run["turn"]

    pairs = [(d, loc) for d in runs if d["executor"] == "dask"
             for loc in runs if loc["executor"] == "local" and pair_key(loc) == pair_key(d)]
    if not pairs:
        return
    print("\nDask against the local pool (dask / local - 1, in %): raw, and per second of task CPU "
          "(see overhead(): the machine's drift factored out)")
    print("| lang | XML MB | pair | task CPU | wall | CPU | wall per task CPU | CPU per task CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for d, loc in pairs:
        o = overhead(d, loc)
        print(f"| {d['lang']} | {d['xml_mb']:.0f} | {d['turn'] + 1} | " + " | ".join(
            f"{(o[k] - 1) * 100:+.0f}" for k in ("speed", "wall", "cpu", "wall_per_task", "cpu_per_task")) + " |")
    print("\nper stage, wall per second of task CPU (median over pairs; vocab and shard are mostly the "
          "client's own work, which the tasks' speed only approximates)")
    print("| lang | XML MB | " + " | ".join(STAGES) + " |")
    print("|---|---|" + "---|" * len(STAGES))
    for key in sorted({(d["lang"], d["mb"]) for d, _ in pairs}):
        group = [(d, loc) for d, loc in pairs if (d["lang"], d["mb"]) == key]
        cells = [statistics.median(overhead(d, loc, (s,))["wall_per_task"] for d, loc in group) for s in STAGES]
        print(f"| {key[0]} | {group[0][0]['xml_mb']:.0f} | "
              + " | ".join(f"{(c - 1) * 100:+.0f}" for c in cells) + " |")


def projection_table(runs: list[dict], workers: int) -> None:
    """Time for a full huwiki and enwiki on 2, 16 and 64 cores, from the largest local run: per
    stage, the CPU seconds of the client process (serial: reading, plans, shard's writing pass)
    and of the pool's workers (parallel) per MB of XML; vocab's sentencepiece training (its
    client seconds) is a constant, since it trains on a sample of at most 1M sentences. Then
    T(N cores) = vocab training + client s/MB x size + workers s/MB x size / N, encode's
    part divided by at most its 16 shards (huwiki; enwiki has one shard per ~128 MB of text).
    Assumes CPU-bound stages that grow linearly with size (the table above checks it), text
    that costs what this language's costs, and cores like this machine's."""
    local = [r for r in runs if r["executor"] == "local"]
    if not local:
        return
    r = max(local, key=lambda x: x["xml_mb"])
    mb = r["xml_mb"]
    train = r["client_cpu"]["vocab"]
    serial = (sum(r["client_cpu"].values()) - train) / mb
    encode = sum(v for k, v in r["worker_cpu"].items() if k.startswith("encode")) / mb
    parallel = sum(r["worker_cpu"].values()) / mb - encode
    print(f"\nprojection from {r['lang']} at {mb:.0f} MB of XML ({workers} workers, local pool): "
          f"sentencepiece {train:.0f} s once; client {serial * 1000:.1f} ms/MB (serial); workers "
          f"{parallel * 1000:.0f} ms/MB + encode {encode * 1000:.0f} ms/MB (parallel)")
    print("| dump | XML GB (assumed) | 2 cores | 16 cores | 64 cores |")
    print("|---|---|---|---|---|")
    for name, gb, shards in (("huwiki (1.1 GB bz2)", 5.0, 16), ("enwiki (22 GB bz2)", 100.0, 200)):
        size = gb * 1000
        secs = [train + serial * size + parallel * size / n + encode * size / min(n, shards)
                for n in (2, 16, 64)]
        print(f"| {name} | {gb:.0f} | " + " | ".join(
            f"{t / 3600:.1f} h" if t >= 3600 else f"{t / 60:.0f} min" for t in secs) + " |")


def extract_table(args, work: Path) -> None:
    from scale_dumps import build

    print(f"\nextract alone (median of {args.runs} runs; speed-up = 1 worker's seconds / 2 workers'; "
          "model s: seconds on free cores from the CPU times, see cpu_model)")
    print("| lang | XML MB | dump | workers | seconds (min-max) | CPU s | XML MB/s | speed-up | model s "
          "| model speed-up | peak RSS main MB | peak RSS worker MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for lang in args.langs:
        for mb in args.sizes[:1]:
            for form in ("multistream", "single-stream"):
                dump = build(work, lang, mb, multistream=form == "multistream")
                one = one_model = None
                for w in (1, 2):
                    runs = [measure({"data": str(work / "run"), "lang": lang, "workers": w, "dump": str(dump),
                                     "executor": "local", "stages": ["extract"]}) for _ in range(args.runs)]
                    sec = [r["seconds"]["extract"] for r in runs]
                    med = statistics.median(sec)
                    model = statistics.median(cpu_model(r, w) for r in runs)
                    one = med if w == 1 else one
                    one_model = model if w == 1 else one_model
                    print(f"| {lang} | {runs[0]['xml_mb']:.0f} | {form} | {w} | {med:.1f} "
                          f"({min(sec):.1f}-{max(sec):.1f}) "
                          f"| {statistics.median(r['cpu'] for r in runs):.1f} | {runs[0]['xml_mb'] / med:.1f} "
                          f"| {one / med:.2f} | {model:.1f} | {one_model / model:.2f} "
                          f"| {max(r['rss_main'] for r in runs):.0f} | {max(r['rss_worker'] for r in runs):.0f} |",
                          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 32], help="MB of XML per dump")
    ap.add_argument("--langs", nargs="+", default=["uk"], choices=["uk", "vi"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executors", nargs="+", default=["local", "dask"], choices=["local", "dask"])
    ap.add_argument("--pairs", type=int, default=1, help="runs of each executor per dump, in turns")
    ap.add_argument("--only", choices=["pipeline", "extract"], default=None)
    ap.add_argument("--runs", type=int, default=3, help="runs of each extract measurement")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "wiki2bert_bench_scale",
                    help="where the dumps are cached and the runs write")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    from scale_dumps import SHARED

    if not (SHARED / "ukwiki.xml.xz").is_file():
        print(f"skipped: {SHARED} is not present")
        return
    if args.only in (None, "pipeline"):
        runs = pipeline_table(args, args.work)
        overhead_table(runs)
        projection_table(runs, args.workers)
    if args.only in (None, "extract"):
        extract_table(args, args.work)


if __name__ == "__main__":   # LocalCluster workers are spawned: they import this file, not run it
    main()
