"""Loader throughput: samples/s per rank streaming gzip HDF5 shards (target >= 20,000).

    .venv/bin/python bench/bench_loader.py                    # synthetic seq-128 shards
    .venv/bin/python bench/bench_loader.py --input_dir DATA/hu/hdf5_.../  # real encode output
    .venv/bin/python bench/bench_loader.py --seq_len 512 --max_pred 80 --samples 8000

Synthetic shards have the encode stage's layout, gzip level 4 and random token ids over a 32k
vocab (real text compresses about as badly). Each row of the table is the median of --runs
runs of one rank reading two epochs of its block in micro-batches of int64 tensors, with
the background prefetch on: samples/s counts from the first batch on (steady streaming, the
next shard loading behind the current one); "first batch" is the start-up (one shard load);
"CPU us/sample" is the process's CPU time per sample (what the wall rate is on an idle core).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402,F401  (imported up front, not inside the first timed batch)

from tests.helpers.synthetic_shards import write_shard  # noqa: E402
from trainer.data import ShardedTrainData, find_shards  # noqa: E402
from vocab.core.layout import bert_specials  # noqa: E402

SPECIALS = bert_specials()   # the vocab layout the encode stage writes
CLS, SEP, FIRST_PIECE = SPECIALS.index("[CLS]"), SPECIALS.index("[SEP]"), len(SPECIALS)


def random_samples(n, seq_len, max_pred, vocab, seed):
    rng = np.random.default_rng(seed)
    lengths = np.where(rng.random(n) < 0.1, rng.integers(8, seq_len, n), seq_len)
    cols = np.arange(seq_len)[None, :]
    real = cols < lengths[:, None]
    ids = np.where(real, rng.integers(FIRST_PIECE, vocab, (n, seq_len)), 0).astype(np.int32)
    ids[:, 0] = CLS
    ids[np.arange(n), lengths - 1] = SEP
    seg = (real & (cols >= lengths[:, None] // 2)).astype(np.int8)
    k = np.minimum(max_pred, np.maximum(1, (lengths * 0.15).round().astype(int)))
    pos = np.zeros((n, max_pred), np.int32)
    for i in range(n):  # ascending positions, padded with 0
        pos[i, :k[i]] = np.sort(rng.choice(np.arange(1, lengths[i] - 1), k[i], replace=False))
    mids = np.where(pos > 0, np.take_along_axis(ids, pos, 1), 0).astype(np.int32)
    return {"input_ids": ids, "input_mask": real.astype(np.int8), "segment_ids": seg,
            "masked_lm_positions": pos, "masked_lm_ids": mids,
            "next_sentence_labels": rng.integers(0, 2, n).astype(np.int8)}


def make_data(root: Path, shards, samples, seq_len, max_pred):
    for i in range(shards):
        s = random_samples(samples, seq_len, max_pred, 32000, seed=i)
        write_shard(root / f"xxwiki_training_{i}.hdf5", samples, samples=s)
    return root


def one_run(files, batch, world, seed, masker=None):
    """(samples/s over the epoch after the first batch, seconds to the first batch, CPU us per
    sample of the whole process: prefetch thread + batching [+ dynamic masking])."""
    data = ShardedTrainData(files, batch, seed, rank=0, world_size=world, masker=masker)
    steps = 2 * data.order.per_rank // batch  # two epochs: shard loads continue while streaming
    c0, t0 = time.process_time(), time.perf_counter()
    it = iter(data)
    next(it)
    t1 = time.perf_counter()
    for _ in range(steps - 1):
        next(it)
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    data.close()
    return (steps - 1) * batch / (t2 - t1), t1 - t0, cpu / (steps * batch) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input_dir")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--samples", type=int, default=25000, help="per synthetic shard")
    ap.add_argument("--seq_len", type=int, default=128)
    ap.add_argument("--max_pred", type=int, default=20)
    ap.add_argument("--batch_sizes", default="32,256")
    ap.add_argument("--worlds", default="1,2")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.input_dir) if args.input_dir else make_data(
            Path(tmp), args.shards, args.samples, args.seq_len, args.max_pred)
        files = find_shards(root).train
        size = sum(os.path.getsize(f.path) for f in files) / 2 ** 20
        print(f"{len(files)} training shards, {sum(f.num_samples for f in files)} samples, "
              f"seq {files[0].seq_len} / pred {files[0].max_pred}, {size:.1f} MiB gzip; "
              f"median of {args.runs} runs")
        print(f"{'ranks':>5} {'batch':>6} {'samples/s per rank':>19} {'first batch s':>14} "
              f"{'CPU us/sample':>14}")
        for world in map(int, args.worlds.split(",")):
            for batch in map(int, args.batch_sizes.split(",")):
                runs = [one_run(files, batch, world, seed) for seed in range(args.runs)]
                rate = statistics.median(r[0] for r in runs)
                first = statistics.median(r[1] for r in runs)
                cpu = statistics.median(r[2] for r in runs)
                print(f"{world:>5} {batch:>6} {rate:>19,.0f} {first:>14.2f} {cpu:>14.1f}")


if __name__ == "__main__":
    main()
