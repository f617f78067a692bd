"""The modern recipe's ModernBERT on a GPU: the trainer's path against transformers' own, on packed rows,
at 128 and 1,024 tokens, and long rows of 8,192 (issue 48).

Usage:
    # on a GPU machine, on packed rows written by `pipeline encode --pack` (bench/README.md: how to
    # build data/gpu_bench here and the one command that runs this there)
    python bench/bench_gpu_modern.py --data data/gpu_bench/uk --out results.md
    python bench/bench_gpu_modern.py --data data/gpu_bench/uk --seqs 8192 --variants ours ours-across
    # CPU smoke run (the test does this on a small packed encode)
    python bench/bench_gpu_modern.py --device cpu --tiny --data DIR --seqs 128 --runs 1 --precision fp32

Settings: ModernBERT-base (trainer/configs/modernbert_base.json: 22 layers, hidden 768, GeGLU
1,152, global attention every 3rd layer, 128-token windows between; --tiny: modernbert_tiny.json)
on the data folder's `hdf5_*seq_len_{L}_*_packed` rows, --tokens real tokens a micro-batch
(rows = tokens / L), --accum micro-batches a step, AdamW, bf16 autocast. Variants, each one
change alone:
    ours               the trainer's ModernBERT family: the real tokens only (trainer/models/hf_varlen.py),
                       attention within each document of a row (FlashAttention's varlen kernel at the
                       documents' boundaries, the local layers with its window arguments), each
                       layer compiled, the masked-LM head at the masked slots only
    ours-across        the same, one segment a row: attention across the documents of a row
    ours-eager         `ours` without compile
    hf                 transformers' ModernBertForMaskedLM, attn_implementation "sdpa" (its masks
                       materialised, the local layers' band included), eager, labels [B, L] with -100
    hf+compile         the same, each layer compiled as ours is
    hf+sparse+compile  transformers' own sparse_prediction (the head at the masked tokens only), compiled
Every variant runs the trainer's step: --accum micro-batches of autocast forward and backward,
clip_grad_norm_(1.0), AdamW, one host sync; batches from the trainer's loader (pinned, the
layout found on the host), the same rows for every variant. Every variant starts from the same
weights, so `first loss` (the first micro-batch's) checks that they compute the same thing:
ours-across and HF's attend alike and must agree within bf16 rounding; ours differs by
attending within documents.

Columns: real tokens/s; model TFLOP/s and MFU (trainer/runtime/flops.py's
modernbert_train_flops over the segments attention actually runs on: a document for `ours`, a
row otherwise; the local layers' pairs within their window; padding never counted), peak GPU
memory, the first micro-batch's loss. Medians of --runs runs of --steps steps after --warmup.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bench.bench_gpu import Clock, machine, matmul_tflops  # noqa: E402
from bench.gpu_tables import add_timing_options  # noqa: E402
from trainer.data import ShardedTrainData, find_shards  # noqa: E402
from trainer.models import get_family  # noqa: E402
from trainer.runtime.flops import modernbert_train_flops  # noqa: E402
from trainer.schedule.optim import build_optimizer  # noqa: E402

VARIANTS = ("ours", "ours-across", "ours-eager", "hf", "hf+compile", "hf+sparse+compile")
DTYPES = {"bf16": torch.bfloat16, "fp32": None}


def packed_shards(data: Path, seq: int):
    folders = sorted(data.glob(f"hdf5_*seq_len_{seq}_*_packed"))
    if not folders:
        raise SystemExit(f"Error: {data} has no hdf5_*seq_len_{seq}_*_packed folder: build it with "
                         "`pipeline encode --pack --max-seq {seq}` (bench/README.md)")
    return find_shards(folders[0]).train


def model_config(tiny: bool, data: Path, seq: int):
    family = get_family("modernbert")
    config = family.read_config_file(ROOT / "trainer" / "configs" /
                                     ("modernbert_tiny.json" if tiny else "modernbert_base.json"))
    vocab = data / "vocab.txt"
    if vocab.is_file():   # the vocab the rows were encoded with: a multiple of 64 rows
        config.vocab_size = -(-sum(1 for _ in vocab.open(encoding="utf-8")) // 64) * 64
    config.max_position_embeddings = max(config.max_position_embeddings, seq)
    return family, config


_WEIGHTS: dict = {}


def initial_weights(config) -> dict:
    """One set of initial weights per config (seed 0), loaded into every variant: the families'
    constructors do not draw their random weights in the same order."""
    from transformers import ModernBertForMaskedLM

    key = config.to_json_string()
    if key not in _WEIGHTS:
        torch.manual_seed(0)
        _WEIGHTS.clear()
        _WEIGHTS[key] = ModernBertForMaskedLM(config).state_dict()
    return _WEIGHTS[key]


def build(variant: str, family, config, device):
    """The variant's model on `device`, from initial_weights(config)."""
    import copy

    from transformers import ModernBertForMaskedLM

    weights = initial_weights(config)
    if variant.startswith("hf"):
        c = copy.deepcopy(config)
        c._attn_implementation = "sdpa"
        c.sparse_prediction = "sparse" in variant
        with torch.device(device):
            model = ModernBertForMaskedLM(c)
        layers = model.model.layers
    else:
        with torch.device(device):
            model = family.build(config, unpad=True, nsp=False)
        layers = model.model.layers
    model.load_state_dict(weights)
    if "compile" in variant or variant in ("ours", "ours-across"):
        for layer in layers:
            layer.compile()
    return model.train()


def hf_inputs(batch: dict) -> dict:
    """The loader's batch in transformers' terms: labels [B, L], -100 off the masked positions."""
    labels = torch.full_like(batch["input_ids"], -100)
    keep = batch["masked_lm_labels"] >= 0
    rows = torch.arange(labels.shape[0])[:, None].expand_as(keep)
    labels[rows[keep], batch["masked_lm_positions"][keep]] = batch["masked_lm_labels"][keep]
    return {"input_ids": batch["input_ids"], "attention_mask": batch["input_mask"], "labels": labels}


def segment_lengths(batch: dict, within: bool) -> torch.Tensor:
    """The lengths attention runs over: the layout's segments (documents), or the rows'."""
    if within:
        return torch.diff(batch["unpadded"].cu_seqlens.long())
    return batch["input_mask"].sum(1)


def measure(variant: str, seq: int, args, device) -> dict:
    family, config = model_config(args.tiny, args.data, seq)
    model = build(variant, family, config, device)
    opt = build_optimizer(model, "adamw", lr=1e-4)
    dtype = DTYPES[args.precision]
    rows = max(1, args.tokens // seq)
    is_hf, within = variant.startswith("hf"), variant in ("ours", "ours-eager")
    pin = device.type == "cuda"
    data = ShardedTrainData(packed_shards(args.data, seq), rows, seed=0, rank=0, world_size=1,
                            vocab_size=config.vocab_size, pin_memory=pin, unpad=not is_hf,
                            doc_attention="within" if within else ("across" if not is_hf else None))
    it = iter(data)
    ctx = torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext()
    clock = Clock(device)
    first = {}

    def fetch():
        batch = next(it)
        inputs = hf_inputs(batch) if is_hf else batch
        return batch, {k: v.to(device, non_blocking=pin) for k, v in inputs.items()}

    def step():
        tokens, flops = 0, 0.0
        batch, inputs = fetch()
        for i in range(args.accum):
            with ctx:
                loss = model(**inputs).loss
            if "loss" not in first:
                first["loss"] = float(loss.detach())
            this = batch
            if i + 1 < args.accum:
                batch, inputs = fetch()
            (loss / args.accum).backward()
            tokens += int(this["input_mask"].sum())
            masked = int((this["masked_lm_labels"] >= 0).sum())
            flops += modernbert_train_flops(config, segment_lengths(this, within), masked).total
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        return tokens, flops

    try:
        t0 = time.perf_counter()
        for _ in range(args.warmup):
            step()
        warmup_s = time.perf_counter() - t0
        profile = None
        if args.profile and device.type == "cuda" and variant in args.profile_variants and seq in args.profile_seqs:
            from bench.gpu_profile import profile_steps

            step()   # a second untimed step: the first may still have compiled
            profile = profile_steps(step, steps=1)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        runs = []
        for _ in range(args.runs):
            clock.sync()
            t0 = time.perf_counter()
            done = [step() for _ in range(args.steps)]
            clock.sync()
            seconds = time.perf_counter() - t0
            runs.append((sum(d[0] for d in done) / seconds, sum(d[1] for d in done) / seconds / 1e12))
    finally:
        data.close()
    return {"rows": rows, "tokens_s": statistics.median(r[0] for r in runs),
            "tflops": statistics.median(r[1] for r in runs), "first_loss": first["loss"],
            "warmup_s": warmup_s, "profile": profile,
            "peak_gib": torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None}


HEADER = ("| seq | variant | rows x accum | real tokens/s | model TFLOP/s | MFU | peak GiB | first loss "
          "| warm-up s |\n" + "|---" * 9 + "|")


def row(seq, variant, r, args, peak, note="") -> str:
    head = f"| {seq} | {variant} |"
    if r is None:
        return head + f" {note} |" + " |" * 6
    mfu = f"{100 * r['tflops'] / peak:.1f}%" if peak else "n/a"
    gib = f"{r['peak_gib']:.1f}" if r["peak_gib"] is not None else "n/a"
    return (head + f" {r['rows']} x {args.accum} | {r['tokens_s']:,.0f} | {r['tflops']:.3g} | {mfu} | "
            f"{gib} | {r['first_loss']:.4f} | {r['warmup_s']:.1f} |")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "gpu_bench" / "uk",
                    help="folder holding encode's hdf5_*seq_len_{L}_*_packed folders (and vocab.txt)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if present")
    ap.add_argument("--tiny", action="store_true", help="the tiny ModernBERT (CPU tests)")
    ap.add_argument("--seqs", nargs="+", type=int, default=[128, 1024, 8192])
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--long-variants", nargs="+", choices=VARIANTS, default=["ours", "ours-across"],
                    help="the variants run at seqs above 1,024 (transformers' masks grow as L^2)")
    ap.add_argument("--precision", choices=tuple(DTYPES), default="bf16")
    ap.add_argument("--tokens", type=int, default=32768, help="real tokens a micro-batch (rows = tokens / L)")
    ap.add_argument("--accum", type=int, default=4, help="micro-batches per optimizer step")
    add_timing_options(ap, "untimed steps first (they pay the compilation)", "also write the table here (markdown)")
    ap.add_argument("--profile", type=Path, default=None, metavar="DIR",
                    help="CUDA: profile one more step of the chosen settings; kernel time by kind "
                         "and the top kernels in DIR/<seq>_<variant>.md (bench/gpu_profile.py)")
    ap.add_argument("--profile-variants", nargs="+", choices=VARIANTS, default=["ours"])
    ap.add_argument("--profile-seqs", nargs="+", type=int, default=[1024])
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.device is None and not torch.cuda.is_available():
        print("bench_gpu_modern.py: no CUDA device here, skipped (--device cpu --tiny runs it on the CPU)")
        return 0
    device = torch.device(args.device or "cuda")
    peak = args.peak_tflops or (989.0 if device.type == "cuda" else None)
    record = args.out.open("w", encoding="utf-8") if args.out else None

    def out(line: str = "") -> None:
        print(line, flush=True)
        if record:   # line by line: a run stopped by its time limit keeps what it measured
            record.write(line + "\n")
            record.flush()

    out(f"- machine: {machine(device)}")
    mm = matmul_tflops(device)
    out(f"- a plain 8192^3 bf16 matmul: {mm:.0f} TFLOP/s" if mm else "- matmul probe: n/a (CPU)")
    out(f"- {'ModernBERT-tiny' if args.tiny else 'ModernBERT-base'}, {args.precision}, AdamW; "
        f"{args.tokens:,} tokens a micro-batch x {args.accum}; median of {args.runs} runs x "
        f"{args.steps} steps after {args.warmup} warm-up; MFU against {peak} TFLOP/s")
    out()
    out(HEADER)
    started, ok = time.perf_counter(), 0
    for seq in args.seqs:
        for variant in (args.variants if seq <= 1024 else args.long_variants):
            if variant not in args.variants and seq <= 1024:
                continue
            if args.budget_min is not None and time.perf_counter() - started > 60 * args.budget_min:
                out(row(seq, variant, None, args, peak, "not run (--budget-min)"))
                continue
            try:
                result = measure(variant, seq, args, device)
                out(row(seq, variant, result, args, peak))
                ok += 1
                if result["profile"] is not None:
                    args.profile.mkdir(parents=True, exist_ok=True)
                    (args.profile / f"{seq}_{variant}.md").write_text(
                        result["profile"].table(30), encoding="utf-8")
            except torch.OutOfMemoryError:
                out(row(seq, variant, None, args, peak, "out of memory"))
            except Exception as exc:  # one failed setting must not lose the others' figures
                traceback.print_exc()
                out(row(seq, variant, None, args, peak, f"error: {type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:120] if str(exc) else ''}"))
            gc.collect()
            torch._dynamo.reset()
            if device.type == "cuda":
                torch.cuda.empty_cache()
    if record:
        record.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
