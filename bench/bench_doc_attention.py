"""Attention within documents against today's path, training on CPU (1 thread): tokens/s and
peak memory of a tiny ModernBERT and a tiny BERT at rows of 128, 512 and 2,048 tokens.

    nice -n 10 .venv/bin/python bench/bench_doc_attention.py [--steps 8] [--tokens 8192]

The models are the shipped trainer/configs/modernbert_tiny.json (3 layers, hidden 128, 64-token
windows, global attention every 3rd layer) and bert_tiny.json (2 layers, hidden 128, dropout 0.1),
with an 8,000-piece vocabulary and positions for the row. The rows are packed as `encode --pack`
writes them (tests/helpers/packed_rows.py: documents of L/4 to 2L tokens, [CLS] doc [SEP], a
[CLS] at the start of every row, 15% static masks), --tokens per step (8192 / L rows).

    within   the batch's layout cut at every document (trainer/data/unpadding.py), the encoder on
             the real tokens, attention of each document among itself (trainer/models/varlen.py:
             segments gathered by length for global layers, [c, 3c] banded blocks for
             ModernBERT's local ones)
    today    ModernBERT: transformers' SDPA with its materialised masks (padding and the local
             layers' sliding windows, [B, 1, L, L]); BERT: our padded network (SDPA with a key
             mask), both attending across the documents of a row

One step = forward + backward + AdamW step, train mode. Both paths of a (model, L) are built in
one process and their steps interleaved (today, within, today, ...), so that a change in the
machine's load falls on both alike; the table gives the medians over --steps steps after two
warm-up steps: tokens/s of the real tokens (wall clock), and the ratio also of the steps'
process CPU time (steadier where other jobs share the cores). Peak memory: the growth of the
peak RSS over two steps of one path, in a process of its own, above what it held once the model
and batch were built. One run.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGS = {"modernbert": ROOT / "trainer" / "configs" / "modernbert_tiny.json",
           "bert": ROOT / "trainer" / "configs" / "bert_tiny.json"}
VOCAB = 8000
LENGTHS = (128, 512, 2048)
PATHS = ("today", "within")


def build(name: str, seq_len: int, path: str, tokens: int):
    """(model, optimizer, batch, real tokens) of one model on one path."""
    import torch

    from tests.helpers.doc_attention import packed_batch
    from trainer.models import get_family
    from trainer.schedule.optim import build_optimizer

    torch.manual_seed(0)
    family = get_family(name)
    keys = {k: v for k, v in json.loads(CONFIGS[name].read_text()).items() if not k.startswith("_")}
    config = family.read_config({**keys, "vocab_size": VOCAB, "max_position_embeddings": seq_len}, "bench")
    unpad = path == "within"
    model = family.build(config, unpad=unpad, nsp=False).train()
    batch = packed_batch(seq_len, max(1, tokens // seq_len), unpad=unpad, vocab_size=VOCAB)
    return model, build_optimizer(model, "adamw", 1e-3, 0.01), batch, int(batch["input_mask"].sum())


def step(model, opt, batch) -> tuple[float, float]:
    """One training step: (wall seconds, process CPU seconds)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    model(**batch).loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return time.perf_counter() - start, time.process_time() - start_cpu


def timing(name: str, seq_len: int, steps: int, tokens: int) -> dict:
    """Both paths in this process, their steps interleaved (today, within, today, ...), so that
    a change in the machine's load falls on both alike: medians of wall and CPU seconds."""
    import torch

    torch.set_num_threads(1)
    runs = {path: build(name, seq_len, path, tokens) for path in PATHS}
    times = {path: [] for path in PATHS}
    for i in range(steps + 2):
        for path in PATHS:
            took = step(*runs[path][:3])
            if i >= 2:
                times[path].append(took)
    out = {}
    for path in PATHS:
        model, _, batch, real = runs[path]
        wall, cpu = (statistics.median(t[j] for t in times[path]) for j in (0, 1))
        out[path] = {"tokens_per_s": real / wall, "tokens_per_cpu_s": real / cpu,
                     "rows": len(batch["input_ids"]),
                     "segments": batch["unpadded"].segments if "unpadded" in batch else None}
    return out


def peak(name: str, seq_len: int, path: str, tokens: int) -> dict:
    """The growth of this process's peak RSS over two training steps of one path."""
    import torch

    torch.set_num_threads(1)
    run = build(name, seq_len, path, tokens)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(2):
        step(*run[:3])
    return {"peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}


def run(*args: str) -> dict:
    """This script with `args`, in a process of its own; its JSON line."""
    res = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=ROOT,
                         env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    if res.returncode:
        raise SystemExit(res.stderr[-3000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--tokens", type=int, default=8192, help="tokens a step (rows = tokens / L)")
    p.add_argument("--timing", nargs=2, metavar=("MODEL", "L"), help=argparse.SUPPRESS)
    p.add_argument("--peak", nargs=3, metavar=("MODEL", "L", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.timing:
        print(json.dumps(timing(args.timing[0], int(args.timing[1]), args.steps, args.tokens)))
        return
    if args.peak:
        print(json.dumps(peak(args.peak[0], int(args.peak[1]), args.peak[2], args.tokens)))
        return
    print(f"CPU, 1 thread, {args.tokens} tokens a step, median of {args.steps} steps "
          "(forward + backward + AdamW), the two paths' steps interleaved\n")
    print("| model | L | rows x documents | today tokens/s | within tokens/s | within / today "
          "| within / today (CPU time) | today peak MB | within peak MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in CONFIGS:
        for seq_len in LENGTHS:
            t = run("--timing", name, str(seq_len), "--steps", str(args.steps), "--tokens", str(args.tokens))
            today, within = t["today"], t["within"]
            mb = {path: run("--peak", name, str(seq_len), path, "--tokens", str(args.tokens))["peak_mb"]
                  for path in PATHS}
            print(f"| {name} | {seq_len:,} | {within['rows']} x {within['segments'] / within['rows']:.1f} "
                  f"| {today['tokens_per_s']:,.0f} | {within['tokens_per_s']:,.0f} "
                  f"| {within['tokens_per_s'] / today['tokens_per_s']:.2f} "
                  f"| {within['tokens_per_cpu_s'] / today['tokens_per_cpu_s']:.2f} "
                  f"| {mb['today']:,.0f} | {mb['within']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
