"""Run every benchmark script in bench/ in turn and print their tables (`make bench`).

Usage:
    .venv/bin/python bench/run_all.py                   # every bench/bench_*.py, its default runs
    .venv/bin/python bench/run_all.py --runs 5          # passes --runs 5 to each script
    .venv/bin/python bench/run_all.py --only encode model

Each script runs in its own process (its peak RSS is its own), one after the other (they would
only slow each other down), with its output streaming through. The output starts with the
machine the tables were measured on, and every table is headed by the exact command that made
it, as bench/README.md quotes them. A copy of everything printed goes to
bench/results/run_all_<UTC time>.md (git-ignored). Scripts that need ../shared/data say so and
skip themselves where it is absent. Exit status 1 if a script failed (the others still run).
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def find_scripts(only: list[str] | None) -> list[Path]:
    scripts = sorted(BENCH.glob("bench_*.py"))
    if only:
        wanted = {o.removeprefix("bench_").removesuffix(".py") for o in only}
        unknown = wanted - {s.stem.removeprefix("bench_") for s in scripts}
        if unknown:
            names = ", ".join(s.stem.removeprefix("bench_") for s in scripts)
            raise SystemExit(f"Error: no bench script for {', '.join(sorted(unknown))} (have: {names})")
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in wanted]
    return scripts


def machine() -> list[str]:
    """What the numbers depend on: CPU, cores, memory, load, library versions."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = ""
    try:
        for line in open("/proc/meminfo", encoding="utf-8"):
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 1e6:.1f} GB RAM"
                break
    except OSError:
        pass
    load = ", load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    versions = []
    for pkg in ("torch", "tokenizers", "sentencepiece", "h5py", "transformers"):
        try:
            versions.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            pass
    return [f"- machine: {cpu}, {cores} cores{mem}{load}",
            f"- Python {platform.python_version()}, {', '.join(versions)}",
            f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC"]


def run_script(script: Path, extra: list[str], out) -> tuple[int, float]:
    """Run one script, echoing its output to the terminal and the results file."""
    cmd = [sys.executable, str(script), *extra]
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    started = time.time()
    # binary pipe: text mode would turn a progress bar's \r redraws into separate lines
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        # what a terminal would show: the last redraw of the line
        out(line.rsplit("\r", 1)[-1].rstrip())
    return proc.wait(), time.time() - started


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="run only these scripts (bench_NAME.py), e.g. encode model")
    ap.add_argument("--runs", type=int, default=None, help="passed as --runs to every script")
    args = ap.parse_args(argv)
    scripts = find_scripts(args.only)
    extra = ["--runs", str(args.runs)] if args.runs else []

    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    record = results / f"run_all_{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}.md"
    lines: list[str] = []

    def out(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    out("# wiki2bert benchmarks")
    out()
    for line in machine():
        out(line)
    failed = []
    for script in scripts:
        out()
        out(f"## {script.name}")
        out()
        out(f"    .venv/bin/python {script.relative_to(ROOT)} {' '.join(extra)}".rstrip())
        out()
        status, seconds = run_script(script, extra, out)
        out()
        out(f"({script.name}: {'ok' if status == 0 else f'FAILED, exit status {status}'}, "
            f"{seconds:.0f} s)")
        if status != 0:
            failed.append(script.name)
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out()
    out(f"bench: {len(scripts) - len(failed)} of {len(scripts)} scripts ran"
        + (f"; failed: {', '.join(failed)}" if failed else "") + f"; output saved in "
        f"{record.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
