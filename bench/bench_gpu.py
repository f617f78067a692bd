"""Training throughput and MFU of our BERT on a GPU, with Hugging Face's BertForPreTraining beside it.

Usage:
    # on a GPU machine, on shards written by `pipeline encode` (bench/README.md: how to build
    # data/gpu_bench here and the one command that runs this there)
    python bench/bench_gpu.py --data data/gpu_bench/uk --out results.md
    python bench/bench_gpu.py --data data/gpu_bench/uk --models large --phases 1 \\
        --precisions bf16 fp16 --variants ours ours+unpad hf --budget-min 5
    # CPU smoke run (the test does this on synthetic shards)
    python bench/bench_gpu.py --device cpu --tiny --data DIR --precisions fp32 --runs 1

Settings: BERT-base and BERT-large (trainer/configs/bert_{base,large}.json; --tiny: bert_tiny),
phase 1 (seq 128, 20 predictions: the data folder's hdf5_*seq_len_128_max_pred_20*) and
phase 2 (seq 512, 80), bf16 or fp16 autocast (fp16 with the GradScaler) or fp32, and variants,
each one change alone:
    ours                 trainer/models/bert_network.py, padded, LAMB (trainer/schedule/optim.py), pinned batches
    ours+unpad           --unpad: the encoder on the real tokens only (flash varlen on CUDA)
    ours+compile         --torch_compile: each encoder layer through torch.compile
    ours+compile+unpad   both
    ours+autotune+unpad  compiled with mode="max-autotune-no-cudagraphs" (Triton matmul templates
                         with the bias + GELU and the residual's epilogues fused where inductor
                         can), unpadded
    ours-pin             batches in pageable memory, blocking copies (what pinning saves)
    ...+staged           the same batches put on the GPU beforehand: no loader (what the
                         loader costs, the issue's "GPU waiting for data", is the difference)
    hf                   transformers' BertForPreTraining, attn_implementation="sdpa", eager
    hf+compile           the same, each encoder layer compiled as ours is
Every variant runs the trainer's step (trainer/loop.py): --accum micro-batches (autocast,
loss scaling in fp16, backward), then clip_grad_norm_(1.0), LAMB and one host sync, on batches
from the trainer's loader (trainer/data/loader.py) over the real shards, the batch size the same for
ours and HF's. The recipes accumulate 128-512 micro-batches per step (trainer/configs/phase*),
so the optimizer's share of their time is under 1%; the default 16 keeps it near 1.5% in a
short run (--accum 1 shows the optimizer's full cost). HF gets its labels as the [B, L] tensor
with -100 that its API takes, built in the loader's time.

Per setting, medians over --runs runs of --steps optimizer steps (after --warmup steps, which
pay the compilation): samples/s; real (non-padding) tokens/s; MFU; peak GPU memory; data: the
host's share of the time spent fetching batches and queueing their copies (the GPU is still
busy with the previous micro-batch then, except at the step's first); opt ms: clipping +
optimizer step, CUDA events.

MFU = model FLOPs per second / peak (--peak-tflops, default 989: the H100 SXM's dense bf16 and
fp16 specification; a plain 8192^3 bf16 matmul is measured first and printed for scale, about
800 TFLOP/s on this workplace's H100s). Model FLOPs per step, trainer/runtime/flops.py, for sequences of
n real tokens and M masked positions in all (hidden H, intermediate I, vocab V, layers N):
    6 x [N (4H^2 + 2HI + 9H + I) x sum(n) + (H^2 + HV + 3H + V) x M + (H^2 + 3H + 2) x B]
    + 12 x N x H x sum(n^2)
i.e. 6 x non-embedding parameters x the rows they see (encoder at real tokens, MLM head at
masked positions only, pooler + NSP once per sequence) plus the attention matmuls (QK^T and
AV, 2 n^2 H each forward, x3 for forward + backward). Padding is not counted, so padded and
unpadded runs and HF's are credited the same FLOPs for the same batch.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bench.gpu_tables import HEADER, Result, Setting, add_timing_options, row, summary  # noqa: E402
from trainer.data import ShardedTrainData, find_shards  # noqa: E402
from trainer.models.bert_network import BertConfig, BertForPreTraining  # noqa: E402
from trainer.runtime.flops import train_flops  # noqa: E402
from trainer.schedule.optim import build_optimizer  # noqa: E402

PHASES = {1: (128, 20), 2: (512, 80)}
BATCH = {("base", 1): 256, ("large", 1): 128, ("base", 2): 64, ("large", 2): 32,
         ("tiny", 1): 8, ("tiny", 2): 2}
VARIANTS = ("ours", "ours+unpad", "ours+compile", "ours+compile+unpad", "ours+autotune+unpad",
            "ours-pin", "ours+staged", "ours+compile+unpad+staged", "hf", "hf+compile")
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": None}


def shards_for(data: Path, phase: int):
    seq, pred = PHASES[phase]
    folders = sorted(data.glob(f"hdf5_*seq_len_{seq}_max_pred_{pred}_*"))
    if not folders:
        raise SystemExit(f"Error: {data} has no hdf5_*seq_len_{seq}_max_pred_{pred}_* folder: "
                         "build it with `pipeline encode` (bench/README.md)")
    return find_shards(folders[0]).train


def model_config(name: str, data: Path) -> BertConfig:
    config = BertConfig.from_json_file(ROOT / "trainer" / "configs" / f"bert_{name}.json")
    vocab = data / "vocab.txt"   # the vocab the shards were encoded with, when it is there
    if vocab.is_file():
        lines = sum(1 for _ in vocab.open(encoding="utf-8"))
        config = replace(config, vocab_size=-(-lines // 64) * 64)  # a multiple of 64
    return config


def hf_model(config: BertConfig):
    import transformers

    hf_config = transformers.BertConfig(**{k: v for k, v in config.to_dict().items()},
                                        attn_implementation="sdpa")
    return transformers.BertForPreTraining(hf_config)


def hf_batch(batch: dict) -> dict:
    """Our batch in HF's terms: labels [B, L], -100 off the masked positions."""
    labels = torch.full_like(batch["input_ids"], -100)
    keep = batch["masked_lm_labels"] >= 0
    rows = torch.arange(labels.shape[0])[:, None].expand_as(keep)
    labels[rows[keep], batch["masked_lm_positions"][keep]] = batch["masked_lm_labels"][keep]
    return {"input_ids": batch["input_ids"], "attention_mask": batch["input_mask"],
            "token_type_ids": batch["segment_ids"], "labels": labels,
            "next_sentence_label": batch["next_sentence_labels"]}


class Clock:
    """Host timer; on CUDA, device events for the optimizer's share of a step."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.spans = []

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def mark(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def elapsed_ms(self, a, b) -> float:
        return a.elapsed_time(b) if self.cuda else (b - a) * 1e3


def measure(s: Setting, config: BertConfig, args, device) -> Result:
    torch.manual_seed(0)
    with torch.device(device):
        if s.variant.startswith("hf"):
            model = hf_model(config)
        else:
            model = BertForPreTraining(config, unpad="unpad" in s.variant)
    model.train()
    if "compile" in s.variant:
        if s.variant.startswith("hf"):
            for layer in model.bert.encoder.layer:
                layer.compile()
        else:
            model.bert.encoder.compile_layers()
    elif "autotune" in s.variant:
        model.bert.encoder.compile_layers(mode="max-autotune-no-cudagraphs")
    opt = build_optimizer(model, "lamb", lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=s.precision == "fp16")
    dtype = DTYPES[s.precision]
    pin = device.type == "cuda" and s.variant != "ours-pin"
    # as the trainer does it: with unpadding the loader finds the real tokens on the host
    data = ShardedTrainData(shards_for(args.data, s.phase), s.batch, seed=0, rank=0, world_size=1,
                            vocab_size=config.vocab_size, pin_memory=pin, unpad="unpad" in s.variant)
    to_inputs = hf_batch if s.variant.startswith("hf") else (lambda b: b)
    clock = Clock(device)
    it = iter(data)
    if "staged" in s.variant:  # the same batches, already on the GPU: no loader at all
        staged = [next(it) for _ in range(2 * args.accum)]
        staged = [(b, {k: v.to(device) for k, v in to_inputs(b).items()}) for b in staged]
        clock.sync()
        it = itertools.cycle(staged)
    ctx = torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext()

    def fetch():
        t0 = time.perf_counter()
        if "staged" in s.variant:
            batch, inputs = next(it)
        else:
            batch = next(it)
            inputs = {k: v.to(device, non_blocking=pin) for k, v in to_inputs(batch).items()}
        return batch, inputs, time.perf_counter() - t0

    def step():
        """One optimizer step over args.accum micro-batches, as trainer/loop.py runs it:
        the next micro-batch is fetched while the GPU runs this one's forward."""
        tokens, flops = 0, 0.0
        batch, inputs, fetch_s = fetch()
        for i in range(args.accum):
            with ctx:
                loss = model(**inputs).loss
            this = batch
            if i + 1 < args.accum:
                batch, inputs, seconds = fetch()
                fetch_s += seconds
            scaler.scale(loss / args.accum).backward()
            lengths = this["input_mask"].sum(1)
            tokens += int(lengths.sum())
            flops += train_flops(config, lengths, int((this["masked_lm_labels"] >= 0).sum())).total
        o0 = clock.mark()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        o1 = clock.mark()
        loss.item()                                  # the trainer's one sync per step
        return fetch_s, (o0, o1), tokens, flops

    try:
        for _ in range(args.warmup):
            step()
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        runs = []
        for _ in range(args.runs):
            clock.sync()
            t0 = time.perf_counter()
            steps = [step() for _ in range(args.steps)]
            clock.sync()
            seconds = time.perf_counter() - t0
            tokens = sum(x[2] for x in steps)
            runs.append(dict(
                samples_s=args.steps * args.accum * s.batch / seconds, tokens_s=tokens / seconds,
                tflops=sum(x[3] for x in steps) / seconds / 1e12,
                padding=1 - tokens / (args.steps * args.accum * s.batch * PHASES[s.phase][0]),
                data_share=sum(x[0] for x in steps) / seconds,
                opt_ms=statistics.median(clock.elapsed_ms(*x[1]) for x in steps)))
        peak = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else None
        report = None
        if args.profile and device.type == "cuda" and s.variant in (args.profile_variants or [s.variant]):
            from bench.gpu_profile import profile_steps

            try:
                report = profile_steps(step, steps=1)
            except Exception:  # the profile is extra: the setting's figures stay
                traceback.print_exc()
    finally:
        data.close()
    return Result(**{k: statistics.median(r[k] for r in runs) for k in runs[0]}, peak_gib=peak,
                  profile=report)


def matmul_tflops(device) -> float | None:
    """What a plain 8192^3 bf16 matmul reaches here (median of 10 after 3 warm-ups)."""
    if device.type != "cuda":
        return None
    a, b = (torch.randn(8192, 8192, device=device, dtype=torch.bfloat16) for _ in range(2))
    times = []
    for i in range(13):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end) / 1e3)
    return 2 * 8192 ** 3 / statistics.median(times) / 1e12


def machine(device) -> str:
    import transformers

    versions = f"torch {torch.__version__}, transformers {transformers.__version__}"
    if device.type != "cuda":
        return f"CPU, {torch.get_num_threads()} threads; {versions}"
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        driver = "unknown"
    return (f"{torch.cuda.get_device_name(device)}, driver {driver}, CUDA {torch.version.cuda}; "
            f"{versions}")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "gpu_bench" / "uk",
                    help="folder holding encode's hdf5_*seq_len_128* and *512* folders (and vocab.txt)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if present")
    ap.add_argument("--tiny", action="store_true", help="BERT-tiny instead of base/large (CPU tests)")
    ap.add_argument("--models", nargs="+", choices=("base", "large"), default=["large", "base"])
    ap.add_argument("--phases", nargs="+", type=int, choices=(1, 2), default=[1, 2])
    ap.add_argument("--precisions", nargs="+", choices=tuple(DTYPES), default=["bf16", "fp16"])
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--batch", type=int, default=None, help="per step, every setting "
                    "(default: base 256 / large 128 at seq 128, 64 / 32 at seq 512)")
    ap.add_argument("--accum", type=int, default=16, help="micro-batches per optimizer step "
                    "(the recipes' gradient accumulation: 128-512 in trainer/configs/phase*)")
    add_timing_options(ap, "untimed optimizer steps first (compilation)", "also write the tables here (markdown)")
    ap.add_argument("--profile", type=Path, default=None, metavar="DIR",
                    help="CUDA: profile 3 more steps of each setting; kernel time by kind in "
                         "the table, top kernels in DIR/<setting>.md (bench/gpu_profile.py)")
    ap.add_argument("--profile-variants", nargs="+", choices=VARIANTS, default=None,
                    help="with --profile: only these variants (default: all)")
    return ap.parse_args(argv)


def settings(args, models) -> list[Setting]:
    """In the order of the issue's goals: bf16 first, then phase 1 (large, base), then phase 2."""
    out = []
    for precision in args.precisions:
        for phase in args.phases:
            for model in models:
                for variant in args.variants:
                    out.append(Setting(model, phase, precision, variant,
                                       args.batch or BATCH[(model, phase)]))
    return out


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.device is None and not torch.cuda.is_available():
        print("bench_gpu.py: no CUDA device here, skipped (bench/README.md gives the GPU command; "
              "--device cpu --tiny runs it on the CPU)")
        return 0
    device = torch.device(args.device or "cuda")
    if args.device is None and not args.data.is_dir():
        print(f"bench_gpu.py: no shards in {args.data}, skipped (bench/README.md: how to build them)")
        return 0
    if device.type == "cpu" and "fp16" in args.precisions:
        raise SystemExit("Error: fp16 needs CUDA (loss scaling on GPU): use --precisions fp32 or bf16")
    peak_tflops = args.peak_tflops or (989.0 if device.type == "cuda" else None)
    models = ["tiny"] if args.tiny else args.models
    configs = {m: model_config(m, args.data) for m in models}
    record = args.out.open("w", encoding="utf-8") if args.out else None

    def out(line: str = "") -> None:
        print(line, flush=True)
        if record:  # line by line: a run stopped by a time limit keeps what it measured
            record.write(line + "\n")
            record.flush()

    out(f"- machine: {machine(device)}")
    mm = matmul_tflops(device)
    out(f"- a plain 8192^3 bf16 matmul: {mm:.0f} TFLOP/s" if mm else "- matmul probe: n/a (CPU)")
    out(f"- MFU against {peak_tflops:g} TFLOP/s" if peak_tflops else "- MFU: n/a (no --peak-tflops)")
    out(f"- data: {args.data}; median of {args.runs} runs x {args.steps} optimizer steps of "
        f"{args.accum} micro-batches after {args.warmup} warm-up step(s)")
    out()
    out(HEADER)
    started, results, profiles = time.perf_counter(), {}, []
    for s in settings(args, models):
        if args.budget_min is not None and time.perf_counter() - started > 60 * args.budget_min:
            out(row(s, None, peak_tflops, "not run (--budget-min)"))
            continue
        try:
            results[s] = measure(s, configs[s.model], args, device)
            out(row(s, results[s], peak_tflops))
            if results[s].profile is not None:
                report = results[s].profile
                name = f"{s.model}_p{s.phase}_{s.precision}_{s.variant.replace('+', '_')}.md"
                args.profile.mkdir(parents=True, exist_ok=True)
                (args.profile / name).write_text(report.table(), encoding="utf-8")
                step_ms = 1e3 * s.batch * args.accum / results[s].samples_s  # one optimizer step
                profiles.append(f"- {name[:-3]}: kernels {report.busy_ms:.1f} of {step_ms:.1f} ms "
                                f"per unprofiled step (GPU idle "
                                f"{100 * max(0, 1 - report.busy_ms / step_ms):.1f}%); under the "
                                f"profiler {report.summary()}")
        except torch.OutOfMemoryError:
            results[s] = None
            out(row(s, None, peak_tflops, "out of memory"))
        except Exception as exc:  # one failed setting must not lose the others' figures
            traceback.print_exc()
            results[s] = None
            out(row(s, None, peak_tflops, f"error: {type(exc).__name__}: "
                    f"{str(exc).splitlines()[0][:120] if str(exc) else ''}"))
        gc.collect()
        torch._dynamo.reset()  # a fresh compile cache per setting (no recompile limit reached)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    out()
    for line in profiles:
        out(line)
    if profiles:
        out()
    for line in summary(results, peak_tflops):
        out(line)
    if record:
        record.close()
    return 0 if any(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
