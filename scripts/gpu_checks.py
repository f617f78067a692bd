"""The trainer's correctness on a GPU: loss curves with and without compile and unpadding, resume,
DeepSpeed ZeRO-1/2, export to transformers; prints one table of checks.

Usage:
    # on the GPU machine (bench/README.md: the data, the wheels and the exact command)
    python scripts/gpu_checks.py --data data/gpu_bench/uk --out-dir /tmp/gpu_checks
    # CPU smoke run (tests/scripts/test_gpu_checks.py)
    python scripts/gpu_checks.py --device cpu --model tiny --precision fp32 --steps 4 \\
        --log-every 1 --variants plain unpad --no-deepspeed --data DIR --out-dir /tmp/checks

Every run is `trainer/run_pretraining.py` as a user starts it, on the phase-1 shards of --data,
with the model config's dropout set to 0: compiled code and the unpadded path draw other
dropout masks than eager padded code, so only without dropout can their curves be compared
step by step. Checks (each PASS or FAIL with its figure):
  curve V      --steps steps with variant V (compile, unpad, compile+unpad) against plain:
               the largest difference of the logged mean losses (every --log-every steps),
               at most --tolerance
  resume       plain, stopped at half the steps and resumed: against the uninterrupted run
               (to --tolerance; the detail says whether it is bitwise equal)
  ZeRO-1/2     --deepspeed with trainer/configs/ds_zero{1,2}.json (bf16, AdamW): finite losses
               (--zero-stages picks them)
  export       python -m trainer.export of the plain run; transformers' BertForPreTraining
               loads it on --device and gives our MLM logits on a batch of the shards
The runs' samples/s (median of the logged windows after the first) are shown beside the curves.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run by path: import the product
    sys.path.insert(0, str(ROOT))

# explicit both ways: left out, both are on for CUDA in bf16 (trainer/runtime/speed.py)
VARIANT_FLAGS = {"plain": ["--no-torch_compile", "--no-unpad"],
                 "compile": ["--torch_compile", "--no-unpad"],
                 "unpad": ["--no-torch_compile", "--unpad"],
                 "compile+unpad": ["--torch_compile", "--unpad"]}


def phase1_shards(data: Path) -> Path:
    folders = sorted(data.glob("hdf5_*seq_len_128_max_pred_20_*"))
    if not folders:
        raise SystemExit(f"Error: {data} has no hdf5_*seq_len_128_max_pred_20_* folder "
                         "(bench/README.md: how to build data/gpu_bench)")
    return folders[0]


def no_dropout_config(model: str, out_dir: Path) -> Path:
    config = json.loads((ROOT / "trainer" / "configs" / f"bert_{model}.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    path = out_dir / f"bert_{model}_no_dropout.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def train(args, out: Path, extra: list[str], log_file: Path, launcher=None) -> tuple[bool, list[dict]]:
    """One trainer run; its output goes to log_file. (ok, the train_log.jsonl records)."""
    cmd = [*(launcher or [sys.executable]), str(ROOT / "trainer" / "run_pretraining.py"),
           "--model_config", str(args.config), "--input_dir", str(args.shards),
           "--vocab_file", str(args.vocab), "--output_dir", str(out), "--device", args.device,
           "--train_batch_size", str(args.batch), "--max_steps", str(args.steps),
           "--learning_rate", "1e-3", "--warmup_proportion", "0.1", "--log_every", str(args.log_every),
           "--checkpoint_every", str(max(1, args.steps // 2)), "--no-tensorboard", *extra]
    if args.precision and "--deepspeed" not in extra:
        cmd += ["--precision", args.precision]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with log_file.open("w") as fh:
        fh.write(" ".join(cmd) + "\n")
        fh.flush()
        ok = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env).returncode == 0
    logged = out / "train_log.jsonl"
    records = [json.loads(line) for line in logged.read_text().splitlines()] if logged.exists() else []
    return ok, [r for r in records if "loss" in r]


def max_diff(a: list[dict], b: list[dict]) -> float:
    """Largest loss difference at the steps `a` logged (inf when `b` misses one of them)."""
    losses = {r["step"]: r["loss"] for r in b}
    if not a or any(r["step"] not in losses for r in a):
        return math.inf
    return max(abs(r["loss"] - losses[r["step"]]) for r in a)


def speed(records: list[dict]) -> str:
    rates = [r["samples_per_sec"] for r in records[1:]] or [r["samples_per_sec"] for r in records]
    return f"{statistics.median(rates):,.0f} samples/s" if rates else "n/a"


def export_check(args, run: Path, log_file: Path) -> tuple[bool, str]:
    """Export `run`, load it in transformers on the device, compare MLM logits with ours."""
    import torch  # torch, transformers and the trainer's network: this check alone needs them
    import transformers

    from trainer.data import eval_batches, find_shards
    from trainer.models.bert_network import BertConfig, BertForPreTraining

    hf_dir = args.out_dir / "hf_export"
    cmd = [sys.executable, "-m", "trainer.export", "--checkpoint_dir", str(run), "--output", str(hf_dir)]
    with log_file.open("w") as fh:
        if subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT).returncode != 0:
            return False, f"export failed: see {log_file}"
    device = torch.device(args.device)
    transformers.utils.logging.disable_progress_bar()
    hf = transformers.BertForPreTraining.from_pretrained(hf_dir).to(device).eval()
    ckpt = sorted((run / "checkpoints").glob("ckpt_*"))[-1]
    ours = BertForPreTraining(BertConfig.from_json_file(run / "model_config.json"))
    ours.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True))
    ours.to(device).eval()
    batch = next(eval_batches(find_shards(args.shards).train[:1], 8, 0, 1))
    batch = {k: v.to(device) for k, v in batch.items()}
    with torch.no_grad():
        out = ours(**batch)
        logits = hf(input_ids=batch["input_ids"], attention_mask=batch["input_mask"],
                    token_type_ids=batch["segment_ids"]).prediction_logits
        rows = torch.arange(len(logits), device=device)[:, None].expand_as(batch["masked_lm_positions"])
        keep = batch["masked_lm_labels"] >= 0
        theirs = logits[rows[keep], batch["masked_lm_positions"][keep]]
    diff = float((theirs - out.mlm_logits).abs().max())
    return diff <= 1e-3, f"max |MLM logits difference| {diff:.2e} on {args.device} (fp32)"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "gpu_bench" / "uk",
                    help="folder with encode's hdf5_*seq_len_128* folder and vocab.txt")
    ap.add_argument("--out-dir", type=Path, default=Path("/tmp/gpu_checks"))
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--model", choices=("tiny", "base", "large"), default="base")
    ap.add_argument("--precision", choices=("bf16", "fp16", "fp32"), default="bf16")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--log-every", type=int, default=10, help="steps per logged mean loss")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="largest difference of logged mean losses that passes")
    ap.add_argument("--variants", nargs="+", choices=tuple(VARIANT_FLAGS),
                    default=list(VARIANT_FLAGS))
    ap.add_argument("--no-deepspeed", action="store_true", help="skip the ZeRO-1/2 runs")
    ap.add_argument("--zero-stages", nargs="+", type=int, choices=(1, 2), default=[1, 2],
                    help="the DeepSpeed ZeRO stages to run (default both)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    args.shards = phase1_shards(args.data)
    args.vocab = args.data / "vocab.txt"
    args.config = no_dropout_config(args.model, args.out_dir)
    rows = []

    def check(name: str, ok: bool, detail: str) -> None:
        rows.append(f"| {name} | {'PASS' if ok else 'FAIL'} | {detail} |")
        print(rows[-1], flush=True)

    print(f"| check ({args.model}, {args.precision}, {args.steps} steps of {args.batch}, "
          f"{args.device}) | result | detail |\n|---|---|---|", flush=True)
    runs = {}
    for variant in ["plain", *[v for v in args.variants if v != "plain"]]:
        out = args.out_dir / variant.replace("+", "_")
        ok, runs[variant] = train(args, out, VARIANT_FLAGS[variant], args.out_dir / f"{out.name}.log")
        if variant == "plain":
            check("plain run", ok and bool(runs[variant]), speed(runs[variant]))
            continue
        diff = max_diff(runs["plain"], runs[variant])
        check(f"curve {variant} vs plain", ok and diff <= args.tolerance,
              f"max |difference| {diff:.4f} of {len(runs[variant])} logged means; {speed(runs[variant])}")
    resumed = args.out_dir / "resumed"
    ok1, _ = train(args, resumed, ["--steps_this_run", str(args.steps // 2)], args.out_dir / "resumed_a.log")
    ok2, records = train(args, resumed, ["--resume_from_checkpoint"], args.out_dir / "resumed_b.log")
    diff = max_diff(runs["plain"], records)
    check("resume at half way vs uninterrupted", ok1 and ok2 and diff <= args.tolerance,
          f"max |difference| {diff:.2e} (bitwise equal: {diff == 0.0})")
    if not args.no_deepspeed:
        for stage in args.zero_stages:
            ok, records = train(args, args.out_dir / f"zero{stage}", [
                "--deepspeed", "--deepspeed_config", str(ROOT / "trainer" / "configs" / f"ds_zero{stage}.json"),
                "--optimizer", "adamw", "--precision", "bf16"], args.out_dir / f"zero{stage}.log",
                launcher=[sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1"])
            finite = bool(records) and all(math.isfinite(r["loss"]) for r in records)
            check(f"DeepSpeed ZeRO-{stage} bf16", ok and finite,
                  f"last loss {records[-1]['loss']:.4f}; {speed(records)}" if records else "no log")
    ok, detail = export_check(args, args.out_dir / "plain", args.out_dir / "export.log")
    check("export loads in transformers", ok, detail)
    (args.out_dir / "checks.md").write_text("\n".join(rows) + "\n")
    print(f"logs in {args.out_dir}")
    return 0 if all("| PASS |" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
