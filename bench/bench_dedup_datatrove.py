"""datatrove's MinHash deduplication (signatures, buckets, clusters, filter) on the corpora of
bench/bench_dedup_scale.py, measured the same way: wall time, peak RSS (the largest process and
all of them), the share of planted copies removed and of new documents lost.

Usage (datatrove is not a dependency of the project: it runs from a virtualenv of its own):
    python -m venv /tmp/dt && /tmp/dt/bin/pip install "datatrove==0.10.*" psutil
    /tmp/dt/bin/python bench/bench_dedup_datatrove.py --work /tmp/w2b_dedup_scale --sizes 200000
    /tmp/dt/bin/python bench/bench_dedup_datatrove.py --ngrams 3 --buckets 25 --hashes 5   # dedup's bands

The corpus is the one bench_dedup_scale.py ingested (WORK/N/data/hu/ingested/*.txt), written
once as JSONL for datatrove's reader (not timed). datatrove's four steps then run as its
example does (LocalPipelineExecutor, --workers tasks a step, a whitespace word tokenizer: the
corpus is eight scripts, all written with spaces), in a child process whose process tree is
sampled every 0.2 s. Its defaults are 5-grams and 14 buckets of 8 hashes (a band collision
means a duplicate, no similarity is checked); --ngrams 3 --buckets 25 --hashes 5 is dedup's
own shingles and bands.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def as_jsonl(ingested: Path, folder: Path) -> Path:
    """The ingested documents as JSONL.gz files (one an ingested file), made once."""
    if not (folder / "done").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(ingested.glob("*.txt")):
            with gzip.open(folder / f"{path.stem}.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out:
                for i, doc in enumerate(path.read_text(encoding="utf-8").split("\n\n")):
                    if doc.strip():
                        record = {"id": f"{path.stem}/{i}", "text": doc.strip()}
                        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        (folder / "done").touch()
    return folder


def run_datatrove(jsonl: Path, work: Path, workers: int, ngrams: int, buckets: int, hashes: int) -> None:
    """datatrove's minhash example, steps 1-4 (in this process)."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter
    from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupSignature
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    class Spaces(WordTokenizer):
        def word_tokenize(self, text: str) -> list[str]:
            return text.split()

        def sent_tokenize(self, text: str) -> list[str]:
            return text.split("\n")

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            raise NotImplementedError

    config = MinhashConfig(hash_config=HashConfig(precision=64), n_grams=ngrams, num_buckets=buckets,
                           hashes_per_bucket=hashes)
    reader = JsonlReader(str(jsonl), glob_pattern="*.jsonl.gz")
    steps = [
        [reader, MinhashDedupSignature(output_folder=str(work / "signatures"), config=config, language=Spaces())],
        [MinhashDedupBuckets(input_folder=str(work / "signatures"), output_folder=str(work / "buckets"),
                             config=config)],
        [MinhashDedupCluster(input_folder=str(work / "buckets"), output_folder=str(work / "remove_ids"),
                             config=config)],
        [reader, MinhashDedupFilter(input_folder=str(work / "remove_ids")),
         JsonlWriter(str(work / "deduped"), compression=None)],
    ]
    tasks = [len(list(jsonl.glob("*.jsonl.gz"))), buckets, 1, len(list(jsonl.glob("*.jsonl.gz")))]
    for k, (pipeline, n) in enumerate(zip(steps, tasks)):
        LocalPipelineExecutor(pipeline=pipeline, tasks=n, workers=min(workers, n),
                              logging_dir=str(work / f"logs{k}")).run()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/w2b_dedup_scale"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[200_000])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--ngrams", type=int, default=5)
    ap.add_argument("--buckets", type=int, default=14)
    ap.add_argument("--hashes", type=int, default=8)
    ap.add_argument("--inner", nargs=2, type=Path, help=argparse.SUPPRESS)   # the child: jsonl, work
    args = ap.parse_args()
    if args.inner:
        run_datatrove(*args.inner, args.workers, args.ngrams, args.buckets, args.hashes)
        return
    from bench_dedup_scale import found
    from process_tree import load, sampled

    print(f"`{' '.join(['python', 'bench/bench_dedup_datatrove.py', *sys.argv[1:]])}`\n")
    print("| documents | wall s | peak RSS largest process MB | peak RSS all processes MB | exact copies found "
          "| near copies found | new lost | load 1-min at start → end |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for documents in args.sizes:
        folder = args.work / str(documents)
        jsonl = as_jsonl(folder / "data/hu/ingested", folder / "jsonl")
        work = folder / "datatrove"
        shutil.rmtree(work, ignore_errors=True)
        before = load()
        cmd = [sys.executable, __file__, "--inner", str(jsonl), str(work), "--workers", str(args.workers),
               "--ngrams", str(args.ngrams), "--buckets", str(args.buckets), "--hashes", str(args.hashes)]
        started = time.time()
        samples, peak = sampled(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wall = time.time() - started
        out = work / "kept"
        out.mkdir()
        for path in sorted((work / "deduped").glob("*.jsonl")):   # the kept texts, as dedup writes them
            with open(path, encoding="utf-8") as fh, open(out / f"{path.stem}.txt", "w", encoding="utf-8") as txt:
                txt.write("\n\n".join(json.loads(line)["text"] for line in fh) + "\n")
        with np.load(folder / "truth.npz") as truth:
            share = found(out, dict(truth))
        print(f"| {documents:,} | {wall:.0f} | {peak:.0f} | {max(s[2] for s in samples):.0f} "
              f"| {share['exact']:.2%} | {share['near']:.2%} | {share['new_lost']} | {before} → {load()} |",
              flush=True)


if __name__ == "__main__":
    os.environ.setdefault("DATATROVE_COLORIZE_LOGS", "0")
    main()
