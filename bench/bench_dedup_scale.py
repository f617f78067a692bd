"""dedup at web scale: wall time, peak memory (the largest process and the sum over the process
tree) and the share of planted copies found, on synthetic web-like corpora of growing size.

Usage:
    .venv/bin/python bench/bench_dedup_scale.py --sizes 200000 --runs 3         # /tmp/w2b_dedup_scale
    .venv/bin/python bench/bench_dedup_scale.py --sizes 1000000 3000000 --runs 1
    .venv/bin/python bench/bench_dedup_scale.py --sizes 200000 --code /tmp/old  # another checkout's code
    .venv/bin/python bench/bench_dedup_scale.py --sizes 200000 --scheduler local  # on a Dask LocalCluster

Input: bench/synthetic_web.py's documents (about 1.8 KB each, eight scripts, 2% exact and 2%
near copies of earlier documents, 0.5% made of boilerplate paragraphs only, one in ten carrying
a shared boilerplate paragraph), seeded, written and ingested once a size (`pipeline ingest`,
64 MB parts) and kept in WORK/N/ until --clean. Each run is `pipeline --workers W dedup
--no-wikipedia` in a fresh process; the process and its workers are sampled every 0.2 s: the
peak RSS of the largest process (its own high-water mark, /proc/PID/status VmHWM) and the RSS
of all of them together (psutil; a peak shorter than 0.2 s may be missed, as in the per-step
figures, which are samples too); the times at which the
stage's task markers appear cut the run into its steps (hash, buckets, decide, write), each
with its seconds and peak memory. Found: a planted copy whose title (its first line, which no rule removes) is gone
from the output, an exact copy counted against its original's. The 1-minute load average
(uptime) at the start and the end of each run is printed beside it: the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from process_tree import load, sampled  # noqa: E402
from synthetic_web import EXACT, NEAR, NEW, PLATES, write_web_corpus  # noqa: E402

from pipeline.text.near_dups import normalised_words, text_hash  # noqa: E402

STEPS = ("hash", "buckets", "decide", "write")


def prepared(work: Path, documents: int, seed: int, workers: int) -> tuple[Path, dict]:
    """DATA_DIR with the corpus of `documents` ingested (made once), and its truth."""
    folder = work / str(documents)
    data, raw = folder / "data", folder / "raw"
    if not (data / "hu/ingested/manifest.json").is_file():
        started = time.time()
        write_web_corpus(raw, documents, seed, workers)
        subprocess.run([sys.executable, "-m", "pipeline", "--data-dir", str(data), "--lang", "hu", "--workers",
                        str(workers), "-q", "ingest", "--source", f"web={raw}/"], check=True, cwd=ROOT)
        shutil.move(raw / "truth.npz", folder / "truth.npz")
        shutil.rmtree(raw)
        print(f"({documents:,} documents written and ingested in {time.time() - started:.0f} s)", flush=True)
    with np.load(folder / "truth.npz") as truth:
        return data, dict(truth)


def step_ends(seen: dict[str, float], wall: float) -> dict[str, float]:
    """When each step ended, from the times its task markers appeared (`seen`: marker -> time):
    hash and buckets at their last marker, decide at its own (before this stage had one: at
    the first write marker), write at the end."""
    last = {p: max((t for m, t in seen.items() if m.startswith(p)), default=None) for p in ("hash_", "bucket_")}
    writes = [t for m, t in seen.items() if m.startswith("write_")]
    decide = seen.get("decide.json", min(writes, default=wall))
    ends = {"hash": last["hash_"] or 0.0, "buckets": last["bucket_"], "decide": decide, "write": wall}
    return {k: v for k, v in ends.items() if v is not None}


def measured(cmd: list[str], env: dict, out: Path) -> dict:
    """Run `cmd`; its wall time and, per step, seconds and peak RSS (largest process, sum)."""
    started, seen, done = time.time(), {}, out / ".stage" / "done"

    def markers(now: float) -> None:
        for marker in os.listdir(done) if done.is_dir() else ():
            seen.setdefault(marker, now)

    proc = subprocess.Popen(cmd, env=env, cwd=env["PYTHONPATH"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)   # the working folder: `-m pipeline` finds the checkout asked for
    samples, peak = sampled(proc, markers)
    output = proc.stdout.read()
    if proc.returncode:
        raise SystemExit(f"dedup failed:\n{output[-3000:]}")
    wall = time.time() - started
    steps, begin = {}, 0.0
    for name, end in step_ends(seen, wall).items():
        inside = [s for s in samples if begin <= s[0] <= end] or [(0, 0.0, 0.0)]
        steps[name] = {"seconds": end - begin, "largest": max(s[1] for s in inside), "sum": max(s[2] for s in inside)}
        begin = end
    return {"wall": wall, "steps": steps, "largest": peak, "sum": max(s[2] for s in samples)}


def found(out: Path, truth: dict) -> dict:
    """Shares of the planted copies removed, and of the new documents kept, from the titles."""
    keys = []
    for path in sorted(out.glob("*.txt")):
        for doc in path.read_text(encoding="utf-8").split("\n\n"):
            if doc.strip():
                keys.append(text_hash(normalised_words(doc.split("\n", 1)[0])))
    present, counts = np.unique(np.asarray(keys, dtype=np.uint64), return_counts=True)

    def count(k: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(present, k), len(present) - 1)
        return np.where(present[at] == k, counts[at], 0)

    kind, title = truth["kind"], truth["title_key"]
    exact_of = truth["original"][kind == EXACT]
    originals, copies = np.unique(exact_of, return_counts=True)
    left = np.clip(count(title[originals]) - 1, 0, copies)       # copies of an original still there
    return {"exact": 1 - left.sum() / max(1, copies.sum()),
            "near": float(np.mean(count(title[kind == NEAR]) == 0)),
            "plates": float(np.mean(count(title[kind == PLATES]) == 0)),
            "new_lost": int(np.sum(count(title[kind == NEW]) == 0))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[200_000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-mb", type=float, default=None, help="dedup's --memory-mb [its default]")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose pipeline runs dedup")
    ap.add_argument("--scheduler", default=None, help="run dedup with --scheduler (e.g. local)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/w2b_dedup_scale"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clean", action="store_true", help="remove each size's corpus after its runs")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.code)}
    top = ["--scheduler", args.scheduler] if args.scheduler else []
    memory = ["--memory-mb", str(args.memory_mb)] if args.memory_mb else []
    print(f"`{' '.join(['python', 'bench/bench_dedup_scale.py', *sys.argv[1:]])}`; code: {args.code}\n")
    print("| documents | text GB | wall s (median) | hash / buckets / decide / write s | peak RSS largest "
          "process MB | peak RSS all processes MB | exact copies found | near copies found | "
          "boilerplate-only found | new lost | load 1-min at start → end |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for documents in args.sizes:
        data, truth = prepared(args.work, documents, args.seed, args.workers)
        ingested = data / "hu" / "ingested"
        text_gb = sum(p.stat().st_size for p in ingested.glob("*.txt")) / 1e9
        out = data / "hu" / "deduped"
        runs, loads = [], []
        for _ in range(args.runs):
            shutil.rmtree(out, ignore_errors=True)
            before = load()
            cmd = [sys.executable, "-m", "pipeline", "--data-dir", str(data), "--lang", "hu", "--workers",
                   str(args.workers), *top, "dedup", "--no-wikipedia", *memory]
            runs.append(measured(cmd, env, out))
            loads.append(f"{before} → {load()}")
        share = found(out, truth)
        summary = json.loads((out / "manifest.json").read_text())["summary"]
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "largest", "sum")}
        steps = " / ".join(f"{statistics.median(r['steps'].get(s, {}).get('seconds', 0) for r in runs):.0f}"
                           for s in STEPS)
        walls = ", ".join(f"{r['wall']:.0f}" for r in runs)
        print(f"| {documents:,} | {text_gb:.2f} | {med['wall']:.0f} ({walls}) "
              f"| {steps} | {med['largest']:.0f} | {med['sum']:.0f} | {share['exact']:.2%} | {share['near']:.2%} "
              f"| {share['plates']:.1%} | {share['new_lost']} | {'; '.join(loads)} |", flush=True)
        per_step = {s: {k: round(max(r["steps"].get(s, {}).get(k, 0) for r in runs)) for k in ("largest", "sum")}
                    for s in STEPS}
        print(f"<!-- {documents:,}: per step peak RSS MB (largest, all): {per_step}; dedup summary: "
              f"{ {k: summary[k] for k in ('documents', 'kept', 'exact', 'near', 'paragraphs')} } -->", flush=True)
        if args.clean:
            shutil.rmtree(args.work / str(documents))


if __name__ == "__main__":
    main()
