"""Every stage a web corpus goes through, from ingest to encode, at gigabytes of one language's
text: wall seconds, MB of input text per second and core, and peak memory (the largest process
and all processes), per stage and per size, on the local pool or a Dask LocalCluster.

Usage:
    .venv/bin/python bench/bench_stages_scale.py --gb 0.5                           # /tmp/w2b_stages
    .venv/bin/python bench/bench_stages_scale.py --gb 0.5 2 --scheduler local       # on Dask, 2 workers
    .venv/bin/python bench/bench_stages_scale.py --gb 5 --stages ingest dedup split  # the stages that fit
    .venv/bin/python bench/bench_stages_scale.py --gb 5 --stages filter shard        # on, from split's output
    .venv/bin/python bench/bench_stages_scale.py --stages --project 100              # hours for 100 GB

Input: bench/synthetic_web.py's documents in one language (--words-from, default the ukwiki dump
of ../shared/data, else the shipped Hungarian sample): prose of the dump's 30,000 most frequent
words, about 1.9 KB a document, 2% exact and 2% near copies and 0.5% boilerplate-only documents
planted, seeded; written once a size into WORK/corpus-SIZE/ (kept until --clean). Each stage is
`pipeline --lang LANG --workers W [--scheduler S] -q STAGE` in a fresh process, in the order
`pipeline run` runs them: ingest --source web=CORPUS, dedup --no-wikipedia, split, filter (its
defaults: language check, repeated lines dropped), shard, vocab (32,000, a sample of 1M
sentences), encode 128/20 (dupe factor 5). With --scheduler local each stage starts its own
LocalCluster of W worker processes (its start-up is in the stage's seconds, its processes in
the memory). Measured (bench/process_tree.py): wall seconds; input MB (the text the stage
reads: its upstream folder's .txt files) / wall / W; CPU seconds of the stage's own process
(the client: what does not spread over workers) and of all its processes (getrusage of the
waited-for children); peak RSS of the largest process (VmHWM) and of all processes (sampled
every 0.2 s); the 1-minute load at the start and the end. A
stage's output folder is removed before it runs; --stages runs some of them on the data folder
WORK/SIZEgb-EXECUTOR/ that an earlier call left; --drop-inputs removes a stage's input once no
later stage reads it (the disk). Every row also goes to WORK/results.jsonl; --project GB then
prints the hours for GB of text on 2, 16 and 64 cores (projection() says how).
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from process_tree import load, sampled  # noqa: E402
from synthetic_web import dump_words, write_web_corpus  # noqa: E402

SHARED_DUMP = ROOT.parent / "shared" / "data" / "ukwiki.xml.xz"
SAMPLE_DUMP = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
BYTES_A_DOCUMENT = 1_900     # the one-language documents' mean size (text files' bytes / documents)
# stage: (its arguments, the folder it reads, the folder it writes)
STAGES = {
    "ingest": (["ingest", "--source", "web={corpus}/"], None, "ingested"),
    "dedup": (["dedup", "--no-wikipedia"], "ingested", "deduped"),
    "split": (["split"], "deduped", "sentences"),
    "filter": (["filter"], "sentences", "filtered"),
    "shard": (["shard"], "filtered", "sharded"),
    "vocab": (["vocab"], "filtered", "vocab"),
    "encode": (["encode", "--max-seq", "128", "--max-pred", "20"], "sharded", "hdf5_*"),
}


def corpus(work: Path, gb: float, words_from: Path, seed: int, workers: int) -> Path:
    """WORK/corpus-SIZE: about `gb` GB of one language's synthetic web documents (made once)."""
    folder = work / f"corpus-{gb:g}"
    if not (folder / "truth.npz").is_file():
        started = time.time()
        shutil.rmtree(folder, ignore_errors=True)
        words = dump_words(words_from, work / "words")
        write_web_corpus(folder, round(gb * 1e9 / BYTES_A_DOCUMENT), seed, workers, words)
        print(f"(corpus of {gb:g} GB written in {time.time() - started:.0f} s)", flush=True)
    return folder


def text_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.glob("*.txt")) / 1e6


def run_stage(name: str, lang_dir: Path, corpus_dir: Path, top: list[str], workers: int) -> dict:
    """One stage in a fresh process: its figures (see the module docstring)."""
    args, reads, writes = STAGES[name]
    for old in lang_dir.glob(writes):
        shutil.rmtree(old)
    source = corpus_dir if reads is None else lang_dir / reads
    if not source.is_dir():
        raise SystemExit(f"Error: {name} reads {source}, which is not there; run the stages before it first")
    mb = text_mb(source)
    cmd = [*top, *[a.format(corpus=corpus_dir) for a in args]]
    before, started, cpu_before = load(), time.time(), children_cpu()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = psutil.Process(proc.pid)
    own = [0.0]

    def client_cpu(_now: float) -> None:   # the stage's own process, as long as it runs
        try:
            times = client.cpu_times()
            own[0] = times.user + times.system
        except psutil.Error:
            pass

    samples, largest = sampled(proc, client_cpu)
    output = proc.stdout.read()
    wall = time.time() - started
    if proc.returncode:
        raise SystemExit(f"Error: {name} failed:\n{output[-3000:]}")
    return {"stage": name, "mb": mb, "wall": wall, "rate": mb / wall / workers, "largest": largest,
            "all": max(s[2] for s in samples), "load": f"{before} → {load()}",
            "cpu": children_cpu() - cpu_before, "client_cpu": own[0]}


def children_cpu() -> float:
    """CPU seconds of every process this one started and waited for, theirs included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, nargs="+", default=[0.5], help="GB of text of each corpus")
    ap.add_argument("--stages", nargs="*", default=list(STAGES), choices=list(STAGES),
                    help="the stages to run [all]; none: only --project")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler", default=None, help="--scheduler of every stage (local: a LocalCluster)")
    ap.add_argument("--words-from", type=Path, default=SHARED_DUMP if SHARED_DUMP.is_file() else SAMPLE_DUMP,
                    help="a dump whose words the documents use [../shared/data/ukwiki.xml.xz, else the sample]")
    ap.add_argument("--lang", default=None, help="--lang of the stages [the dump's: its name's first letters]")
    ap.add_argument("--work", type=Path, default=Path("/tmp/w2b_stages"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--drop-inputs", action="store_true", help="remove a stage's input once nothing reads it")
    ap.add_argument("--clean", action="store_true", help="remove each size's corpus and data folder at the end")
    ap.add_argument("--project", type=float, default=None, metavar="GB",
                    help="then the hours for GB of text on 2, 16, 64 cores, from WORK/results.jsonl")
    args = ap.parse_args()
    lang = args.lang or args.words_from.name.split("wiki")[0]
    executor = "dask" if args.scheduler else "local"
    print(f"`{' '.join(['python', 'bench/bench_stages_scale.py', *sys.argv[1:]])}`; {lang}, {args.workers} workers, "
          f"{executor}\n")
    print("| text GB | stage | input MB | wall s | MB/s a core | CPU s: stage process / all "
          "| peak RSS largest process MB | peak RSS all processes MB | load 1-min start → end |")
    print("|---:|---|---:|---:|---:|---|---:|---:|---|")
    for gb in args.gb if args.stages else ():
        corpus_dir = corpus(args.work, gb, args.words_from, args.seed, args.workers)
        data = args.work / f"{gb:g}gb-{executor}"
        top = [sys.executable, "-m", "pipeline", "--data-dir", str(data), "--lang", lang, "--workers",
               str(args.workers), *(["--scheduler", args.scheduler] if args.scheduler else []), "-q"]
        for i, name in enumerate(args.stages):
            r = run_stage(name, data / lang, corpus_dir, top, args.workers)
            with open(args.work / "results.jsonl", "a") as fh:   # every run's figures, for --project
                fh.write(json.dumps({**r, "gb": gb, "executor": executor, "workers": args.workers}) + "\n")
            print(f"| {gb:g} | {name} | {r['mb']:,.0f} | {r['wall']:.0f} | {r['rate']:.2f} "
                  f"| {r['client_cpu']:.0f} / {r['cpu']:.0f} | {r['largest']:.0f} | {r['all']:.0f} | {r['load']} |",
                  flush=True)
            later = {STAGES[s][1] for s in args.stages[i + 1:]}
            if args.drop_inputs and STAGES[name][1] and STAGES[name][1] not in later:
                shutil.rmtree(data / lang / STAGES[name][1])
        if args.clean:
            shutil.rmtree(corpus_dir)
            shutil.rmtree(data)
    if args.project:
        projection(args.work / "results.jsonl", args.project)


def projection(results: Path, gb: float) -> None:
    """Hours for `gb` GB of text on 2, 16 and 64 cores, from each stage's largest local run in
    `results`: its stage process's CPU seconds a MB run on one core (shard's plan and writing
    pass, dedup's ordered pass, the pool's plumbing), the other processes' spread over the
    cores (sentencepiece's training, one task on a capped sample, is among them: a constant,
    0.3 s on this text's 30,000 words, minutes on real text). Assumes cores like this
    machine's, CPU-bound stages (a disk that keeps up) and text that costs what this text costs."""
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    best = {}
    for r in rows:
        if r["executor"] == "local" and r["gb"] >= best.get(r["stage"], {}).get("gb", 0):
            best[r["stage"]] = r
    print(f"\nprojection for {gb:g} GB of text (per stage from its largest local run: serial = the stage "
          "process's CPU s/MB, parallel = the other processes' CPU s/MB / cores)")
    print("| stage | measured at GB | serial ms/MB | parallel ms/MB | 2 cores | 16 cores | 64 cores |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    totals = [0.0, 0.0, 0.0]
    for name in STAGES:
        if name not in best:
            continue
        r = best[name]
        serial, parallel = r["client_cpu"] / r["mb"], (r["cpu"] - r["client_cpu"]) / r["mb"]
        secs = [serial * gb * 1000 + parallel * gb * 1000 / n for n in (2, 16, 64)]
        totals = [t + x for t, x in zip(totals, secs)]
        print(f"| {name} | {r['gb']:g} | {serial * 1000:.1f} | {parallel * 1000:.0f} | "
              + " | ".join(hours(x) for x in secs) + " |")
    print("| all | | | | " + " | ".join(hours(x) for x in totals) + " |")


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


if __name__ == "__main__":
    main()
