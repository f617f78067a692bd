"""Does pretraining help on the dump's own probe? A small BERT pretrained on CPU for a fixed
budget against the same model from random weights, fine-tuned on `pipeline probe`'s task.

Usage:
    python bench/bench_probe.py [--langs uk vi] [--work /tmp/w2b_probe] [--steps 800]
        [--seeds 1,2,3 | --runs 3] [--every 2]

Per language (the dumps in ../shared/data): `pipeline run` (vocab 8,000, HDF5 128/20, the probe
with 3,000 training sentences),
phase-1 pretraining of a small BERT (4 layers, hidden 128, 2 heads) on 2 CPU ranks for --steps
steps of 2 x 32 sequences (LAMB 1e-2, a checkpoint every --steps/4), then
`python -m trainer.finetune --run RUN --every N --probe ... --baseline random-init` over the
seeds. It prints one table: per language and checkpoint, the probe's entity F1 (mean ± sd over
seeds), the random-init baseline, and whether the gap is larger than 2 sd. Finished stages,
runs and fine-tuned seeds are reused on a rerun. `pipeline report --run RUN` then shows the
curve (its downstream section). It takes about an hour on 2 cores: pretraining about 15 minutes
per language, each fine-tuning 1-3 minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
MODEL = {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 2,
         "intermediate_size": 512, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
         "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512,
         "type_vocab_size": 2, "initializer_range": 0.02, "layer_norm_eps": 1e-12}
VOCAB_SIZE = 8000
PROBE_TRAIN = 3000
FINETUNE = ["--epochs", "3", "--learning_rate", "5e-4", "--batch_size", "32"]


def run(cmd: list, log: Path, env: dict | None = None) -> float:
    """Run a command with its output in `log`; return its seconds (raise on failure)."""
    t0 = time.perf_counter()
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(map(str, cmd)) + "\n")
        fh.flush()
        proc = subprocess.run([str(c) for c in cmd], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONUTF8": "1", **(env or {})})
    if proc.returncode:
        sys.exit(f"Error: {cmd[2:5]} failed (exit {proc.returncode}): see {log}")
    return time.perf_counter() - t0


def configs(work: Path, steps: int) -> Path:
    model = dict(MODEL, vocab_size=VOCAB_SIZE)
    (work / "bert_mini.json").write_text(json.dumps(model, indent=1))
    cfg = {"model_config": "bert_mini.json", "device": "cpu", "precision": "fp32",
           "train_batch_size": 32, "gradient_accumulation_steps": 1, "optimizer": "lamb",
           "learning_rate": 1e-2, "warmup_proportion": 0.1, "max_steps": steps, "seed": 42,
           "log_every": 50, "eval_every": max(1, steps // 4), "eval_max_samples": 2000,
           "checkpoint_every": max(1, steps // 4), "keep_checkpoints": 8}
    path = work / "pretrain.json"
    path.write_text(json.dumps(cfg, indent=1))
    return path


def one_language(lang: str, args) -> dict:
    work = args.work / lang
    work.mkdir(parents=True, exist_ok=True)
    log = work / "bench.log"
    dump = SHARED / f"{lang}wiki.xml.xz"
    times = {}
    py = sys.executable
    times["pipeline"] = run([py, "-m", "pipeline", "--data-dir", args.work / "data", "--lang", lang,
                             "run", "--dump", dump, "--vocab-size", VOCAB_SIZE, "--encode",
                             "128/20"], log)
    data = args.work / "data" / lang
    # a probe of PROBE_TRAIN training sentences keeps 2 x 3 x 3 fine-tunings in minutes on CPU
    times["pipeline"] += run([py, "-m", "pipeline", "--data-dir", args.work / "data", "--lang", lang,
                              "probe", "--train-sentences", PROBE_TRAIN, "--force"], log)
    hdf5 = next(data.glob("hdf5_*_seq_len_128_*"))
    cfg = configs(work, args.steps)
    run_dir = work / "run"
    times["pretrain"] = run([py, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                             "trainer/run_pretraining.py", "--config_file", cfg, "--input_dir", hdf5,
                             "--vocab_file", data / "vocab", "--output_dir", run_dir,
                             "--resume_from_checkpoint"], log, env={"OMP_NUM_THREADS": "1"})
    out = run_dir / "downstream"
    times["finetune"] = run([py, "-m", "trainer.finetune", "--run", run_dir, "--every", args.every,
                             "--probe", data, "--output_dir", out, "--seeds", args.seeds,
                             "--baseline", "random-init", *FINETUNE], log)
    results = json.loads((out / "results.json").read_text())
    probe = json.loads((data / "probe" / "manifest.json").read_text())
    return {"lang": lang, "results": results, "times": times, "probe": probe}


def table(rows: list[dict]) -> None:
    print("| lang | checkpoint step | probe entity F1, pretrained | random init | gap / 2 sd |")
    print("|---|---|---|---|---|")
    for r in rows:
        res = r["results"]
        base = res["random_init"]
        for c in res["checkpoints"]:
            gap = c["mean"] - base["mean"]
            two_sd = 2 * max(c["sd"], base["sd"])
            print(f"| {r['lang']} | {c['step']} | {c['mean']:.4f} ± {c['sd']:.4f} | "
                  f"{base['mean']:.4f} ± {base['sd']:.4f} | {gap:+.4f} / {two_sd:.4f} "
                  f"({'yes' if gap > two_sd else 'no'}) |")
    for r in rows:
        ex = r["results"]["data"]["examples"]
        t = r["times"]
        print(f"{r['lang']}: probe train/dev/test {ex.get('train', 0):,}/{ex.get('validation', 0):,}/"
              f"{ex.get('test', 0):,} sentences; pipeline {t['pipeline']:.0f} s, pretraining "
              f"{t['pretrain']:.0f} s, fine-tuning {t['finetune']:.0f} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--langs", nargs="+", default=["uk", "vi"])
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_probe"))
    p.add_argument("--steps", type=int, default=800, help="pretraining steps (the budget)")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--runs", type=int, default=None,
                   help="seeds 1..RUNS instead of --seeds (make bench passes --runs)")
    p.add_argument("--every", type=int, default=2, help="fine-tune every N-th checkpoint")
    args = p.parse_args(argv)
    if args.runs:
        args.seeds = ",".join(str(i) for i in range(1, args.runs + 1))
    missing = [lang for lang in args.langs if not (SHARED / f"{lang}wiki.xml.xz").is_file()]
    if missing:
        print(f"skipped: {SHARED}/{missing[0]}wiki.xml.xz is not present")
        return 0
    rows = [one_language(lang, args) for lang in args.langs]
    table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
