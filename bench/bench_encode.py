"""Benchmark of `pipeline encode` on real Wikipedia text; prints a table.

Usage:
    .venv/bin/python bench/bench_encode.py                    # seq 128/20 and 512/80, 1 and 2 workers
    .venv/bin/python bench/bench_encode.py --runs 5 --reference /path/to/create_pretraining_data.py

Text: ../shared/data/ukwiki.xml.xz through the project's own stages (`pipeline run --no-encode`,
cached in --work), which gives one ~4 MB training shard and its vocab. Each measurement runs
in a fresh process: the one-worker row encodes that shard, the two-worker row two copies of it
(two shard names, so two different seeds) with --workers 2. Reported: medians over --runs of
wall time, CPU time (all processes), text MB/s per core (text MB / wall / workers), text MB per
CPU second (the same when the cores are free; the fairer figure on a busy machine), instances
per second, output MB and the peak RSS of the largest process.

--reference runs a local copy of NVIDIA's create_pretraining_data.py (taking --vocab_file,
--input_file, --output_file, --max_seq_length, --max_predictions_per_seq, --dupe_factor) on the
same shard for comparison; it is not shipped with the project.
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
SHARED = ROOT.parent / "shared" / "data"
PY = sys.executable

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from pipeline.stages.encode import encode
args = json.loads(sys.argv[1])
summary = encode(**args)
wall = time.perf_counter() - t0
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
out = Path(summary["output"])
print(json.dumps({
    "wall": wall,
    "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
    "rss_mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024,
    "instances": summary["instances"],
    "out_mb": sum(p.stat().st_size for p in out.glob("*.hdf5")) / 1e6,
}))
"""


def prepare(work: Path, lang: str = "uk") -> tuple[Path, Path]:
    """The shard and vocab of `lang` from the project's stages (cached)."""
    data = work / "data"
    shard_dir = data / lang / "sharded"
    if not (shard_dir / "manifest.json").is_file():
        dump = SHARED / f"{lang}wiki.xml.xz"
        if not dump.is_file():
            print(f"bench_encode: skipped, {dump} not found (this benchmark needs ../shared/data)")
            sys.exit(0)
        print(f"preparing {lang} shards and vocab with the project's stages (once) ...", flush=True)
        subprocess.run([str(ROOT / ".venv" / "bin" / "pipeline"), "--data-dir", str(data), "--lang", lang,
                        "-q", "run", "--dump", str(dump), "--no-encode", "--num-shards", "1"],
                       check=True, cwd=ROOT)
    shards = sorted(shard_dir.glob("*_training_*.txt"))
    return shards[0], data / lang / "vocab"


def measure(shards: list[Path], vocab: Path, work: Path, workers: int, seq: int, pred: int) -> dict:
    inp = Path(tempfile.mkdtemp(dir=work, prefix="in_"))
    for i, s in enumerate(shards):
        os.symlink(s, inp / f"bench_training_{i}.txt")
    out = Path(tempfile.mkdtemp(dir=work, prefix="out_"))
    args = dict(data_dir=str(work), lang="bench", workers=workers, input=str(inp), output=str(out),
                vocab=str(vocab), max_seq=seq, max_pred=pred, dupe_factor=5, force=True)
    try:
        res = subprocess.run([PY, "-c", CHILD, json.dumps(args)], cwd=ROOT, check=True,
                             capture_output=True, text=True)
        return json.loads(res.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(inp)
        shutil.rmtree(out)


def measure_reference(script: Path, shard: Path, vocab: Path, work: Path, seq: int, pred: int) -> dict:
    out = work / "reference.hdf5"
    t0 = time.perf_counter()
    cmd = ["/usr/bin/time", "-f", "%M %U %S", PY, str(script), "--vocab_file", str(vocab / "vocab.txt"),
           "--input_file", str(shard), "--output_file", str(out), "--max_seq_length", str(seq),
           "--max_predictions_per_seq", str(pred), "--dupe_factor", "5"]
    res = subprocess.run(cmd, cwd=script.parent, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss_kb, user, sys_ = res.stderr.strip().splitlines()[-1].split()
    import h5py

    with h5py.File(out, "r") as f:
        n = f["input_ids"].shape[0]
    return {"wall": wall, "cpu": float(user) + float(sys_), "rss_mb": int(rss_kb) / 1024,
            "instances": n, "out_mb": out.stat().st_size / 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "wiki2bert_bench_encode")
    ap.add_argument("--reference", type=Path, default=None,
                    help="a local copy of NVIDIA's create_pretraining_data.py to compare with")
    ap.add_argument("--settings", default="128/20,512/80")
    opts = ap.parse_args()
    opts.work.mkdir(parents=True, exist_ok=True)
    shard, vocab = prepare(opts.work)
    mb = shard.stat().st_size / 1e6
    text = shard.read_text(encoding="utf-8")
    lines = sum(1 for line in text.split("\n") if line.strip())
    docs = len([d for d in text.split("\n\n") if d.strip()])
    print(f"shard {shard.name}: {mb:.2f} MB, {lines:,} sentences, {docs:,} documents; "
          f"vocab {vocab}; medians of {opts.runs} runs\n")
    rows = []
    for setting in opts.settings.split(","):
        seq, pred = map(int, setting.split("/"))
        for workers in (1, 2):
            shards = [shard] * workers
            runs = [measure(shards, vocab, opts.work, workers, seq, pred) for _ in range(opts.runs)]
            rows.append((f"{seq}/{pred}", "encode", workers, mb * workers, runs))
        if opts.reference:
            runs = [measure_reference(opts.reference, shard, vocab, opts.work, seq, pred)
                    for _ in range(max(1, opts.runs // 2))]
            rows.append((f"{seq}/{pred}", "reference", 1, mb, runs))
    head = (f"{'seq/pred':>8} {'what':>9} {'workers':>7} {'text MB':>7} {'wall s':>7} {'cpu s':>7} "
            f"{'MB/s/core':>9} {'MB/cpu-s':>8} {'inst/s':>8} {'instances':>9} {'out MB':>7} {'peak RSS MB':>11}")
    print(head)
    print("-" * len(head))
    for setting, what, workers, text_mb, runs in rows:
        med = lambda k, runs=runs: statistics.median(r[k] for r in runs)  # noqa: E731
        wall = med("wall")
        print(f"{setting:>8} {what:>9} {workers:>7} {text_mb:>7.2f} {wall:>7.2f} {med('cpu'):>7.2f} "
              f"{text_mb / wall / workers:>9.2f} {text_mb / med('cpu'):>8.2f} {med('instances') / wall:>8.0f} "
              f"{int(med('instances')):>9} "
              f"{med('out_mb'):>7.1f} {max(r['rss_mb'] for r in runs):>11.0f}")


if __name__ == "__main__":
    main()
