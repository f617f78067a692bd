"""Benchmark of the `extract` and `format` stages on the real dumps in ../shared/data.

Usage:
    .venv/bin/python bench/bench_corpus_extract.py [--runs 3] [--workers 1 2] [--dumps ukwiki viwiki]

Each measurement runs the stage in a fresh subprocess (so peak RSS is that run's own: the main
process and, separately, its largest worker, from getrusage RUSAGE_SELF / RUSAGE_CHILDREN) into
a fresh output folder; the table shows the median over --runs. Input MB is the uncompressed
XML for extract and the extracted JSON for format; MB/s per core = input MB / seconds / workers;
CPU s = user+sys of the run and its workers (MB per CPU s does not depend on how busy the
machine is, wall seconds do).
Skips (with a message) when ../shared/data is absent.
"""
from __future__ import annotations

import argparse
import json
import lzma
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def one_run(stage: str, src: str, out: str, workers: int) -> None:
    """Child mode: run one stage, print a JSON line with seconds, documents and peak RSS."""
    import logging
    import resource
    import time

    sys.path.insert(0, str(ROOT))
    logging.basicConfig(level=logging.WARNING)
    from pipeline.stages.extract import extract
    from pipeline.stages.format import format_corpus

    t = time.perf_counter()
    if stage == "extract":
        summary = extract(input=src, output=out, workers=workers)
    else:
        summary = format_corpus(input=src, output=out, workers=workers)
    seconds = time.perf_counter() - t
    self_ru = resource.getrusage(resource.RUSAGE_SELF)
    kids_ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    me, kids = self_ru.ru_maxrss / 1024, kids_ru.ru_maxrss / 1024
    cpu = self_ru.ru_utime + self_ru.ru_stime + kids_ru.ru_utime + kids_ru.ru_stime
    print(json.dumps({"seconds": seconds, "cpu": cpu, "documents": summary["documents"],
                      "output_bytes": summary["output_bytes"], "rss_main": me, "rss_worker": kids}))


def measure(stage: str, src: Path, out: Path, workers: int) -> dict:
    if out.exists():
        shutil.rmtree(out)
    res = subprocess.run([sys.executable, __file__, "--one", stage, str(src), str(out), str(workers)],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--dumps", nargs="+", default=["ukwiki", "viwiki"])
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        stage, src, out, workers = args.one
        one_run(stage, src, out, int(workers))
        return
    if not (SHARED / "ukwiki.xml.xz").is_file():
        print(f"skipped: {SHARED} is not present")
        return

    rows = {"extract": [], "format": []}
    with tempfile.TemporaryDirectory(prefix="bench_extract_") as tmp:
        tmp = Path(tmp)
        for name in args.dumps:
            dump = SHARED / f"{name}.xml.xz"
            with lzma.open(dump) as fh:
                xml_mb = sum(len(b) for b in iter(lambda: fh.read(1 << 20), b"")) / 1e6
            extracted = tmp / f"{name}_extracted"
            for workers in args.workers:
                for stage in ("extract", "format"):
                    src = dump if stage == "extract" else extracted
                    in_mb = xml_mb if stage == "extract" else sum(
                        p.stat().st_size for p in extracted.rglob("wiki_*")) / 1e6
                    runs = []
                    for _ in range(args.runs):
                        out = tmp / f"{name}_{stage}_{workers}"
                        runs.append(measure(stage, src, out, workers))
                        if stage == "extract":  # keep one extract output as format's input
                            if extracted.exists():
                                shutil.rmtree(extracted)
                            shutil.copytree(out, extracted)
                    sec = statistics.median(r["seconds"] for r in runs)
                    rows[stage].append((name, workers, in_mb, runs[0]["output_bytes"] / 1e6,
                                        runs[0]["documents"], sec, in_mb / sec / workers,
                                        max(r["rss_main"] for r in runs), max(r["rss_worker"] for r in runs),
                                        min(r["seconds"] for r in runs), max(r["seconds"] for r in runs),
                                        statistics.median(r["cpu"] for r in runs)))
    for stage, table in rows.items():
        print(f"\n{stage} (median of {args.runs} runs)")
        print("| dump | workers | input MB | output MB | documents | seconds (min-max) | MB/s per core "
              "| CPU s | MB per CPU s | peak RSS main MB | peak RSS worker MB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for name, w, i, o, d, s, rate, rm, rw, lo, hi, cpu in table:
            print(f"| {name} | {w} | {i:.1f} | {o:.1f} | {d} | {s:.2f} ({lo:.2f}-{hi:.2f}) | {rate:.2f} "
                  f"| {cpu:.2f} | {i / cpu:.2f} | {rm:.0f} | {rw:.0f} |")


if __name__ == "__main__":
    main()
