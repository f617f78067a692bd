"""Static masks with dupe factor 5 against dynamic masks with dupe factor 1, at equal steps.

Usage:
    python bench/bench_masking_quality.py [--lang uk] [--work /tmp/w2b_probe] [--steps 800]
        [--seeds 1,2,3]

Uses bench_probe.py's data folder and small BERT (4 layers, hidden 128; vocab 8,000; the probe
of 3,000 training sentences): `pipeline encode` once more with `--dupe-factor 1`, then two
pretraining runs of the same model, same seed, same steps and batch (one process each, side by
side on the two cores): the 2019 recipe (static masks, dupe factor 5) and dynamic masks over one
copy of the text (`--masking dynamic`). Both final checkpoints are evaluated on the SAME
held-out instances, the static test masks of the dupe-factor-5 encode (the held-out text
masked five ways: MLM loss and accuracy),
and fine-tuned on the probe over the seeds. Prints the encode time and disk of both copies and
one table. Finished steps are reused on a rerun.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_probe import FINETUNE, ROOT, SHARED, VOCAB_SIZE, configs, run  # noqa: E402


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.hdf5"))


def encode(data: Path, dupe: int, log: Path) -> tuple[Path, float]:
    """The HDF5 folder of `dupe` copies (encoded now, or found from an earlier run)."""
    found = list(data.glob(f"hdf5_*_seq_len_128_*_dupe_factor_{dupe}"))
    seconds = float("nan")
    if not found or not (found[0] / "manifest.json").is_file():
        seconds = run([sys.executable, "-m", "pipeline", "--data-dir", data.parent, "--lang",
                       data.name, "--workers", 2, "encode", "--max-seq", 128, "--max-pred", 20,
                       "--dupe-factor", dupe], log)
        found = list(data.glob(f"hdf5_*_seq_len_128_*_dupe_factor_{dupe}"))
    manifest = json.loads((found[0] / "manifest.json").read_text())
    return found[0], manifest.get("seconds", seconds)


def pretrain(name: str, hdf5: Path, cfg: Path, data: Path, work: Path, extra: list) -> subprocess.Popen:
    out = work / f"masking_{name}"
    cmd = [sys.executable, "trainer/run_pretraining.py", "--config_file", cfg, "--input_dir", hdf5,
           "--vocab_file", data / "vocab", "--output_dir", out, "--resume_from_checkpoint",
           "--train_batch_size", 64, *extra]
    log = open(work / f"masking_{name}.log", "a", encoding="utf-8")
    return subprocess.Popen([str(c) for c in cmd], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUTF8": "1"})


def evaluate(run_dir: Path, test_dir: Path) -> dict:
    """MLM loss and accuracy of the run's newest checkpoint on the static masks of test_dir."""
    import torch

    from trainer.checkpoint import latest_checkpoint
    from trainer.data import eval_batches, find_shards
    from trainer.models.bert_network import BertConfig, BertForPreTraining

    ckpt = latest_checkpoint(run_dir)
    model = BertForPreTraining(BertConfig.from_json_file(run_dir / "model_config.json"))
    model.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True))
    model.eval()
    loss = correct = count = 0.0
    with torch.no_grad():
        for batch in eval_batches(find_shards(test_dir).test, 64, 0, 1):
            out = model(**batch)
            m = out.mlm_labels.numel()
            loss += out.mlm_loss.item() * m
            correct += (out.mlm_logits.argmax(-1) == out.mlm_labels).sum().item()
            count += m
    return {"step": int(ckpt.name.split("_")[-1]), "mlm_loss": loss / count, "mlm_acc": correct / count,
            "masked_tokens": int(count)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lang", default="uk")
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_probe"))
    p.add_argument("--steps", type=int, default=800)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--runs", type=int, default=None, help="seeds 1..RUNS instead of --seeds")
    args = p.parse_args(argv)
    if args.runs:
        args.seeds = ",".join(str(i) for i in range(1, args.runs + 1))
    if not (SHARED / f"{args.lang}wiki.xml.xz").is_file():
        print(f"skipped: {SHARED}/{args.lang}wiki.xml.xz is not present")
        return 0
    work = args.work / args.lang
    work.mkdir(parents=True, exist_ok=True)
    log = work / "masking_bench.log"
    data = args.work / "data" / args.lang
    if not (data / "probe" / "manifest.json").is_file():
        run([sys.executable, "bench/bench_probe.py", "--langs", args.lang, "--work", args.work,
             "--steps", 1], log)   # builds the data folder and probe (a 1-step run is cheap)
    d5, s5 = encode(data, 5, log)
    d1, s1 = encode(data, 1, log)
    cfg = configs(work, args.steps)
    variants = {"static_dupe5": (d5, []), "dynamic_dupe1": (d1, ["--masking", "dynamic"])}
    t0 = time.perf_counter()
    procs = {n: pretrain(n, h, cfg, data, work, extra) for n, (h, extra) in variants.items()}
    for name, proc in procs.items():
        if proc.wait():
            sys.exit(f"Error: pretraining {name} failed: see {work}/masking_{name}.log")
    pretrain_s = time.perf_counter() - t0
    rows = {}
    for name in variants:
        run_dir = work / f"masking_{name}"
        ev = evaluate(run_dir, d5)
        out = run_dir / "downstream"
        run([sys.executable, "-m", "trainer.finetune", "--model", run_dir, "--probe", data,
             "--output_dir", out, "--seeds", args.seeds, *FINETUNE], log)
        res = json.loads((out / "results.json").read_text())["pretrained"]
        rows[name] = dict(ev, f1_mean=res["mean"], f1_sd=res["sd"], f1=res["scores"])
    print(f"{args.lang}: encode dupe 5 {s5:.1f} s, {folder_bytes(d5) / 2**20:.1f} MiB; dupe 1 "
          f"{s1:.1f} s, {folder_bytes(d1) / 2**20:.1f} MiB; both pretrainings side by side "
          f"{pretrain_s:.0f} s ({args.steps} steps x 64, vocab {VOCAB_SIZE:,})")
    print("| recipe | step | eval MLM loss | eval MLM acc | masked tokens | probe entity F1 (seeds) |")
    print("|---|---|---|---|---|---|")
    for name, r in rows.items():
        scores = ", ".join(f"{x:.3f}" for x in r["f1"])
        print(f"| {name} | {r['step']} | {r['mlm_loss']:.4f} | {r['mlm_acc']:.4f} | "
              f"{r['masked_tokens']:,} | {r['f1_mean']:.4f} ± {r['f1_sd']:.4f} ({scores}) |")
    (work / "masking_results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
