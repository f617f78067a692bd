"""Benchmark of the text stages split, filter and shard on the real dumps in ../shared/data.

The formatted text comes from the project's own download/extract/format stages (run once per
dump in a temporary data directory). Each stage then runs in a fresh process, with
--workers 1 and 2, several times, and the table gives medians: input MB, output MB,
documents, seconds (whole command, and the stage's own time from its manifest), MB/s per
core (input MB / stage seconds / workers), and the peak RSS of the
largest process (the stage or one of its workers; quntoken's helpers are separate programs).

Usage:
    .venv/bin/python bench/bench_corpus_text.py [--runs 3] [--data ../shared/data] [--keep DIR]
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
PIPELINE = [sys.executable, "-m", "pipeline", "-q"]
ENV = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}


def run_pipeline(args: list[str]) -> tuple[float, float]:
    """Run `pipeline ARGS` in a fresh process: (seconds, peak RSS MB of its largest process)."""
    started = time.perf_counter()
    proc = subprocess.Popen(PIPELINE + args, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pipeline {' '.join(args)} failed:\n{err}")
    return seconds, usage.ru_maxrss / 1024


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.glob("*.txt")) / 1e6


def prepare(dump: Path, lang: str, data_dir: Path) -> Path:
    """The formatted text of `dump`, made by the project's download/extract/format stages."""
    for stage in (["download", "--dump", str(dump)], ["extract"], ["format"]):
        run_pipeline(["--data-dir", str(data_dir), "--lang", lang, "--workers", "2"] + stage)
    return data_dir / lang / "formatted"


def bench_stage(stage, lang, src, work, runs, workers, extra=()):
    rows = []
    for w in workers:
        times, rss, inner = [], [], []
        for r in range(runs):
            out = work / f"{lang}_{stage}{''.join(extra)}_{w}_{r}"
            secs, peak = run_pipeline(["--lang", lang, "--workers", str(w), stage, "--input", str(src),
                                       "--output", str(out), *extra])
            times.append(secs)
            rss.append(peak)
            inner.append(json.loads((out / "manifest.json").read_text())["seconds"])
        summary = json.loads((out / "manifest.json").read_text())["summary"]
        med = statistics.median(times)
        rows.append({"lang": lang, "stage": stage + (" " + " ".join(extra) if extra else ""),
                     "workers": w, "in_mb": folder_mb(src), "out_mb": folder_mb(out),
                     "docs": summary.get("documents"), "s": med,
                     "mbps_core": folder_mb(src) / statistics.median(inner) / w,
                     "stage_s": statistics.median(inner), "rss": statistics.median(rss),
                     "spread": f"{min(times):.2f}-{max(times):.2f}", "out": out})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--keep", type=Path, default=None, help="Work here and keep the outputs.")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_corpus_text_"))
    rows = []
    try:
        for lang in ("uk", "vi"):
            dump = args.data / f"{lang}wiki.xml.xz"
            if not dump.is_file():
                print(f"skipping {lang}: {dump} not found")
                continue
            formatted = prepare(dump, lang, work / "data")
            split_rows = bench_stage("split", lang, formatted, work, args.runs, (1, 2))
            rows += split_rows
            rows += bench_stage("split", lang, formatted, work, args.runs, (1, 2),
                                ("--splitter", "quntoken"))
            filter_rows = bench_stage("filter", lang, split_rows[0]["out"], work, args.runs, (1, 2))
            rows += filter_rows
            rows += bench_stage("shard", lang, filter_rows[0]["out"], work, args.runs, (1, 2))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    head = (f"{'lang':4} {'stage':25} {'w':>1} {'in MB':>6} {'out MB':>6} {'docs':>5} "
            f"{'sec (med)':>9} {'range':>11} {'stage s':>7} {'MB/s/core':>9} {'peak RSS MB':>11}")
    print(f"\nmedians of {args.runs} runs, fresh process per run; sec = whole command (with the "
          "CLI's start-up), stage s = the stage's own time from its manifest; MB/s/core = in MB / stage s / workers")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['lang']:4} {r['stage']:25} {r['workers']:>1} {r['in_mb']:6.2f} {r['out_mb']:6.2f} "
              f"{r['docs']:>5} {r['s']:9.2f} {r['spread']:>11} {r['stage_s']:7.2f} {r['mbps_core']:9.2f} "
              f"{r['rss']:11.0f}")


if __name__ == "__main__":
    main()
