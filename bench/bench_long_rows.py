"""Encode time and peak memory of `pipeline encode --pack` at long rows (issue 44); prints two
tables: time and peak RSS per input and row length, and what the rows hold (the encode
summary's article deciles and context shares).

Usage:
    .venv/bin/python bench/bench_long_rows.py [--data data/bench] [--langs uk vi]
        [--seqs 128 2048 8192] [--scale 4 16 64] [--base cce76db --base-scale 4 16]
        [--work /tmp/w2b_bench_long_rows] [--runs 1]

Input: DATA/LANG/sharded and DATA/LANG/vocab as `pipeline --data-dir data/bench --lang uk run
--dump ../shared/data/ukwiki.xml.xz` leaves them (run with --no-encode when they are missing).
Inputs per language: "shards", the language's shards as the pipeline wrote them (all of them,
one worker: the peak is the largest shard's); and for the first language "1 shard xK", one
training shard of all its training shards' text repeated K times (the same documents K times,
so the same length distribution, a shard K times as large), for K in --scale. Each encode
runs in a fresh process with --dupe-factor 5 (encode's default), --max-pred 15% of the row,
one worker; reported: wall and CPU seconds (the machine is shared: CPU s is the steadier
figure), text MB, rows, the peak RSS of that process (ru_maxrss: the memory the rows need,
the spilled ids mapped a batch at a time). `--base REV` runs the encode of git revision REV
(`git archive`, e.g. cce76db before packed layout 2, whose plan was an int64 per stream token)
on the "1 shard xK" inputs of --base-scale, for comparison. With --runs N each figure is the
median of N encodes (peak RSS: the largest).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pipeline.stages.encode import encode
summary = encode(**json.loads(sys.argv[1]))
wall = time.perf_counter() - t0
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
                  "rss_mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024, "summary": summary}))
"""


def prepare(data: Path, lang: str) -> bool:
    """The language's shards and vocab from the project's stages (made once); False when
    neither they nor the dump are there."""
    if (data / lang / "sharded" / "manifest.json").is_file() and (data / lang / "vocab" / "manifest.json").is_file():
        return True
    if not (SHARED / f"{lang}wiki.xml.xz").is_file():
        return False
    subprocess.run([str(ROOT / ".venv" / "bin" / "pipeline"), "--data-dir", str(data), "--lang", lang,
                    "run", "--dump", str(SHARED / f"{lang}wiki.xml.xz"), "--no-encode"], check=True)
    return True


def scaled_shard(data: Path, lang: str, k: int, work: Path) -> Path:
    """A folder with one training shard: all the language's training shards' text, k times."""
    folder = work / f"{lang}-x{k}"
    shard = folder / f"{lang}wiki_training_0.txt"
    if not shard.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        texts = [p.read_text(encoding="utf-8").strip("\n")
                 for p in sorted((data / lang / "sharded").glob("*_training_*.txt"))]
        one = "\n\n".join(texts)
        with open(shard, "w", encoding="utf-8") as fh:
            for i in range(k):
                fh.write(one + ("\n\n" if i < k - 1 else "\n"))
    return folder


def measure(code: Path, data: Path, lang: str, folder: Path, seq: int, out: Path, runs: int = 1) -> dict:
    """The median of `runs` encodes (wall, CPU), the largest peak RSS, the summary."""
    ms = [encode_once(code, data, lang, folder, seq, out) for _ in range(runs)]
    return {"wall": statistics.median(m["wall"] for m in ms), "cpu": statistics.median(m["cpu"] for m in ms),
            "rss_mb": max(m["rss_mb"] for m in ms), "summary": ms[-1]["summary"]}


def encode_once(code: Path, data: Path, lang: str, folder: Path, seq: int, out: Path) -> dict:
    args = {"data_dir": str(data), "lang": lang, "input": str(folder), "output": str(out),
            "pack": True, "max_seq": seq, "max_pred": max(1, seq * 15 // 100), "workers": 1,
            "force": True}
    env = {**os.environ, "PYTHONPATH": str(code)}
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=code, env=env,
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"encode failed ({code}, {folder}, {seq}):\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def base_code(rev: str, work: Path) -> Path:
    """The repository at `rev`, unpacked once."""
    folder = work / f"code-{rev}"
    if not folder.is_dir():
        folder.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=ROOT / "data" / "bench")
    p.add_argument("--langs", nargs="+", default=["uk", "vi"])
    p.add_argument("--seqs", nargs="+", type=int, default=[128, 2048, 8192])
    p.add_argument("--scale", nargs="+", type=int, default=[4, 16, 64])
    p.add_argument("--base", default=None, help="git revision to compare with (e.g. cce76db)")
    p.add_argument("--base-scale", nargs="+", type=int, default=[4, 16])
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "w2b_bench_long_rows")
    p.add_argument("--runs", type=int, default=1)
    a = p.parse_args(argv)
    data = a.data.resolve()
    a.work.mkdir(parents=True, exist_ok=True)
    missing = [lang for lang in a.langs if not prepare(data, lang)]
    if missing:
        print(f"skipped: no {data / missing[0] / 'sharded'} and no {SHARED / (missing[0] + 'wiki.xml.xz')}")
        return 0
    inputs = [(lang, "shards", data / lang / "sharded") for lang in a.langs]
    inputs += [(a.langs[0], f"1 shard x{k}", scaled_shard(data, a.langs[0], k, a.work)) for k in a.scale]
    codes = [("layout 2", ROOT)]
    if a.base:
        codes.append((f"base {a.base}", base_code(a.base, a.work)))
    rows, context = [], []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for lang, what, folder in inputs:
        text_mb = sum(f.stat().st_size for f in folder.glob("*.txt")) / 1e6
        largest = max(f.stat().st_size for f in folder.glob("*.txt")) / 1e6
        for name, code in codes:
            if name != "layout 2" and not any(what == f"1 shard x{k}" for k in a.base_scale):
                continue
            for seq in a.seqs:
                m = measure(code, data, lang, folder, seq, a.work / "out", a.runs)
                s = m["summary"]
                rows.append((lang, what, name, text_mb, largest, seq, s["instances"], m["wall"], m["cpu"],
                             m["rss_mb"]))
                print(f"  {rows[-1]}", file=sys.stderr, flush=True)
                if name == "layout 2" and what == "shards":
                    context.append((lang, seq, s))
    print(f"\nencode --pack, --dupe-factor 5, --max-pred 15% of the row, one worker ({started})\n")
    head = (f"{'lang':4} {'input':13} {'code':14} {'text MB':>8} {'shard MB':>8} {'seq':>5} {'rows':>8} "
            f"{'wall s':>7} {'CPU s':>7} {'peak RSS MB':>11}")
    print(head)
    print("-" * len(head))
    for lang, what, name, mb, largest, seq, n, wall, cpu, rss in rows:
        print(f"{lang:4} {what:13} {name:14} {mb:8.1f} {largest:8.1f} {seq:5d} {n:8,d} {wall:7.1f} {cpu:7.1f} "
              f"{rss:11.0f}")
    print("\nwhat the rows hold (the encode summary)\n")
    head = (f"{'lang':4} {'seq':>5} {'article tokens p10 / p50 / p90 (max)':>38} "
            f"{'tokens in articles >= 512 / 2048 / 8192':>42} {'tokens with context >= 512 / 2048 / 8192':>42}")
    print(head)
    print("-" * len(head))
    for lang, seq, s in context:
        d = s["article_tokens"]
        deciles = f"{d['p10']:,} / {d['p50']:,} / {d['p90']:,} ({d['max']:,})"
        pct = lambda x: " / ".join(f"{100 * x[t]:.1f}%" for t in ("512", "2048", "8192"))  # noqa: E731
        print(f"{lang:4} {seq:5d} {deciles:>38} {pct(s['tokens_in_articles_of']):>42} "
              f"{pct(s['tokens_with_context']):>42}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
