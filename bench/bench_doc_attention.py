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

One step = forward + backward + AdamW step, train mode; the table gives the median over --steps
steps after two warm-up steps, tokens/s of the real tokens (wall clock), the ratio also of the
steps' process CPU time (steadier where other jobs share the cores), and the peak RSS of the
process that ran them above what it held once the model and batch were built. Each (model, L, path) runs in
a process of its own, one after the other, once.
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


def one(name: str, seq_len: int, path: str, steps: int, tokens: int) -> dict:
    """Steps of one model on one path in this process: median seconds, tokens/s, peak growth."""
    import torch

    from tests.helpers.doc_attention import packed_batch
    from trainer.models import get_family
    from trainer.optim import build_optimizer

    torch.set_num_threads(1)
    torch.manual_seed(0)
    family = get_family(name)
    keys = {k: v for k, v in json.loads(CONFIGS[name].read_text()).items() if not k.startswith("_")}
    config = family.read_config({**keys, "vocab_size": VOCAB, "max_position_embeddings": seq_len}, "bench")
    unpad = path == "within"
    model = family.build(config, unpad=unpad, nsp=False).train()
    opt = build_optimizer(model, "adamw", 1e-3, 0.01)
    batch = packed_batch(seq_len, max(1, tokens // seq_len), unpad=unpad, vocab_size=VOCAB)
    real = int(batch["input_mask"].sum())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times, cpu = [], []
    for i in range(steps + 2):
        start, start_cpu = time.perf_counter(), time.process_time()
        model(**batch).loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= 2:
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    step = statistics.median(times)
    return {"step_s": step, "tokens_per_s": real / step, "cpu_s": statistics.median(cpu),
            "peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
            "segments": batch["unpadded"].segments if unpad else None, "rows": len(batch["input_ids"])}


def run(name, seq_len, path, steps, tokens) -> dict:
    cmd = [sys.executable, __file__, "--one", name, str(seq_len), path, "--steps", str(steps),
           "--tokens", str(tokens)]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                         env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    if res.returncode:
        raise SystemExit(res.stderr[-3000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--tokens", type=int, default=8192, help="tokens a step (rows = tokens / L)")
    p.add_argument("--one", nargs=3, metavar=("MODEL", "L", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        name, seq_len, path = args.one
        print(json.dumps(one(name, int(seq_len), path, args.steps, args.tokens)))
        return
    print(f"CPU, 1 thread, {args.tokens} tokens a step, median of {args.steps} steps "
          "(forward + backward + AdamW)\n")
    print("| model | L | rows x segments | today tokens/s | within tokens/s | within / today "
          "| (CPU time) | today peak MB | within peak MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in CONFIGS:
        for seq_len in LENGTHS:
            today = run(name, seq_len, "today", args.steps, args.tokens)
            within = run(name, seq_len, "within", args.steps, args.tokens)
            print(f"| {name} | {seq_len:,} | {within['rows']} x {within['segments'] / within['rows']:.1f} "
                  f"| {today['tokens_per_s']:,.0f} | {within['tokens_per_s']:,.0f} "
                  f"| {within['tokens_per_s'] / today['tokens_per_s']:.2f} "
                  f"| {today['cpu_s'] / within['cpu_s']:.2f} "
                  f"| {today['peak_mb']:,.0f} | {within['peak_mb']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
