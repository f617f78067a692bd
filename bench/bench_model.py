"""Training-step throughput of our BERT vs Hugging Face `BertForPreTraining` (CPU, 1 thread).

    .venv/bin/python bench/bench_model.py [--runs 5] [--steps 8] [--vocab 16000]

Same shapes and data for both: BERT 2 layers / hidden 128 / 2 heads / intermediate 512,
a 16k vocab, seq 128, batch 16, max_pred 20 (random ids; 90% of rows full length, as BERT's
create_pretraining_data makes them). One step = forward + backward + optimizer step, train
mode (dropout on). HF gets its labels as a full [B, L] tensor with -100 off the masked
positions, as its API wants. Runs are interleaved (ours, HF, ours, ...) so a noisy shared
machine hurts both alike; the table gives the median over runs, of wall-clock and of
the process's CPU time (steadier when other jobs share the cores).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from trainer.models.bert_network import BertConfig, BertForPreTraining  # noqa: E402
from trainer.schedule.optim import build_optimizer  # noqa: E402


def make_batch(B, L, P, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.zeros(B, L, dtype=torch.long)
    input_mask = torch.zeros(B, L, dtype=torch.long)
    segment_ids = torch.zeros(B, L, dtype=torch.long)
    positions = torch.zeros(B, P, dtype=torch.long)
    labels = torch.full((B, P), -1, dtype=torch.long)
    for i in range(B):
        n = L if torch.rand(1, generator=g).item() < 0.9 else int(torch.randint(16, L, (1,), generator=g))
        input_ids[i, :n] = torch.randint(104, vocab, (n,), generator=g)
        input_mask[i, :n] = 1
        segment_ids[i, n // 2:n] = 1
        k = min(P, max(1, round(0.15 * (n - 3))))
        pos = torch.randperm(n - 2, generator=g)[:k].sort().values + 1
        positions[i, :k] = pos
        labels[i, :k] = input_ids[i, pos]
    nsp = torch.randint(0, 2, (B,), generator=g)
    ours = dict(input_ids=input_ids, segment_ids=segment_ids, input_mask=input_mask,
                masked_lm_positions=positions, masked_lm_labels=labels, next_sentence_labels=nsp)
    full = torch.full((B, L), -100, dtype=torch.long)
    for i in range(B):
        real = labels[i] != -1
        full[i, positions[i][real]] = labels[i][real]
    hf = dict(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids,
              labels=full, next_sentence_label=nsp)
    return ours, hf


def timed_steps(model, opt, batch, steps):
    """(wall seconds, CPU seconds of this process) per step."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        loss = model(**batch).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=8, help="timed steps per run")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=16000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--max_pred", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    import transformers

    cfg = dict(vocab_size=args.vocab, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
               intermediate_size=512, max_position_embeddings=512, type_vocab_size=2)
    torch.manual_seed(0)
    ours = BertForPreTraining(BertConfig(**cfg)).train()
    hf = transformers.BertForPreTraining(transformers.BertConfig(**cfg)).train()
    hf.load_state_dict(ours.state_dict())                     # same weights, same data
    ours_lamb = BertForPreTraining(BertConfig(**cfg)).train()
    batch, hf_batch = make_batch(args.batch, args.seq, args.max_pred, args.vocab)

    contenders = {
        "ours (AdamW)": (ours, build_optimizer(ours, "adamw", lr=1e-4), batch),
        "HF BertForPreTraining (AdamW)": (hf, build_optimizer(hf, "adamw", lr=1e-4), hf_batch),
        "ours (LAMB)": (ours_lamb, build_optimizer(ours_lamb, "lamb", lr=1e-4), batch),
    }
    for model, opt, b in contenders.values():
        timed_steps(model, opt, b, args.warmup)
    times = {name: [] for name in contenders}
    for _ in range(args.runs):
        for name, (model, opt, b) in contenders.items():
            times[name].append(timed_steps(model, opt, b, args.steps))

    def med(name, i):
        return statistics.median(t[i] for t in times[name])

    hf = "HF BertForPreTraining (AdamW)"
    print(f"BERT L=2 H=128 A=2 I=512, vocab {args.vocab}, seq {args.seq}, batch {args.batch}, "
          f"max_pred {args.max_pred}; CPU, {args.threads} thread(s), torch {torch.__version__}, "
          f"transformers {transformers.__version__}; median of {args.runs} runs x "
          f"{args.steps} steps (fwd+bwd+optimizer). Wall time suffers from other load on "
          f"the machine; CPU time of the process much less so.")
    print(f"{'model':<30} {'wall ms/step':>12} {'samples/s':>10} {'vs HF':>6} "
          f"{'CPU ms/step':>12} {'samples/CPU-s':>13} {'vs HF':>6}")
    for name in times:
        wall, cpu = med(name, 0), med(name, 1)
        print(f"{name:<30} {wall * 1e3:12.1f} {args.batch / wall:10.1f} "
              f"{med(hf, 0) / wall:5.2f}x {cpu * 1e3:12.1f} {args.batch / cpu:13.1f} "
              f"{med(hf, 1) / cpu:5.2f}x")


if __name__ == "__main__":
    main()
