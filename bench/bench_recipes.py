"""The 2019 recipe against the modern one at an equal wall-clock budget; prints a table.

Usage:
    .venv/bin/python bench/bench_recipes.py --lang uk --budget 30m --seeds 1,2,3
    .venv/bin/python bench/bench_recipes.py --lang uk --budget 2m --seeds 1 --epochs 1   # smoke

Input: DATA/LANG/{sharded,vocab,probe} as `pipeline run` + `pipeline probe` leave them
(bench/bench_probe.py makes them in /tmp/w2b_probe/data from ../shared/data). Into --work:

- 2019: `encode` pairs 128/20 at 15%, --dupe-factor 5; a post-norm BERT (4 layers, hidden 256)
  with MLM + NSP, static masks, LAMB 1e-2, `poly`.
- modern: `encode --pack` 128/40 at 30%, --dupe-factor 1; a ModernBERT of about the same
  parameter count without the embeddings (4 layers, hidden 256, GeGLU 672), MLM only, dynamic
  30% mask-only (--mask_replace_prob 1.0 --random_replace_prob 0.0), AdamW 1e-3, `wsd`.

Both train on 2 CPU ranks (torchrun, one thread each) with --train_budget BUDGET, batch 2 x 32.
Then each is exported and measured the same way: MLM accuracy on the same held-out rows
(`encode --pack` 128/20 at 15%, its test files: packed rows, so the 2019 model meets rows
longer and denser than its own) read through the export with transformers'
AutoModelForMaskedLM, and the probe's entity F1 (`python -m trainer.finetune --probe`, mean ±
sd over --seeds). Reported: steps reached, wall time against the budget, both figures.
Finished encodes are reused; runs and fine-tunings start over (--reuse keeps a finished
run, its export and its finished fine-tuning seeds; --baseline RECIPE adds random init). At the default 30 minutes a run
it takes about 1.5 hours per language on 2 cores (two runs, two fine-tunings of 3 seeds).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_probe import FINETUNE, run  # noqa: E402

BERT = {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
        "intermediate_size": 1024, "max_position_embeddings": 512, "type_vocab_size": 2}
MODERN = {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
          "intermediate_size": 672, "max_position_embeddings": 512,
          "global_attn_every_n_layers": 3, "local_attention": 64}
COMMON = ["--device", "cpu", "--precision", "fp32", "--train_batch_size", "32",
          "--log_every", "20", "--checkpoint_every", "100000", "--no-tensorboard",
          "--warmup_proportion", "0.06", "--seed", "42"]
RECIPES = {
    "2019": ["--model_type", "bert", "--masking", "static", "--optimizer", "lamb",
             "--learning_rate", "1e-2", "--lr_schedule", "poly"],
    "modern": ["--model_type", "modernbert", "--no_nsp", "--masking", "dynamic",
               "--mlm_probability", "0.3", "--mask_replace_prob", "1.0",
               "--random_replace_prob", "0.0", "--optimizer", "adamw", "--learning_rate", "1e-3",
               "--lr_schedule", "wsd"],
}


def encode_sets(data: Path, lang: str, work: Path) -> dict:
    from pipeline.stages.encode import encode

    out = {}
    for name, kw in {"2019": dict(max_seq=128, max_pred=20, masked_lm_prob=0.15, dupe_factor=5),
                     "modern": dict(max_seq=128, max_pred=40, masked_lm_prob=0.3, dupe_factor=1,
                                    pack=True),
                     "heldout": dict(max_seq=128, max_pred=20, masked_lm_prob=0.15, dupe_factor=1,
                                     pack=True)}.items():
        summary = encode(data_dir=data, lang=lang, workers=2, output=work / "hdf5", **kw)
        out[name] = Path(summary["output"]).parent
    return out


def mlm_accuracy(hf_dir: Path, heldout: Path, max_rows: int) -> float:
    """Accuracy at the static 15% masks of the held-out packed rows (their *test* files)."""
    import h5py
    import torch
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(hf_dir).eval()
    right = total = 0
    for f in sorted(heldout.rglob("*_test_*.hdf5")):
        with h5py.File(f, "r") as fh:
            n = min(len(fh["input_ids"]), max_rows - total // 1)
            ids, mask = fh["input_ids"][:n], fh["input_mask"][:n]
            pos, orig = fh["masked_lm_positions"][:n], fh["masked_lm_ids"][:n]
        for s in range(0, n, 64):
            with torch.no_grad():
                logits = model(input_ids=torch.from_numpy(ids[s:s + 64]).long(),
                               attention_mask=torch.from_numpy(mask[s:s + 64]).long()).logits
            p = torch.from_numpy(pos[s:s + 64]).long()
            pred = logits.argmax(-1).gather(1, p).numpy()
            real = pos[s:s + 64] > 0
            right += int((pred == orig[s:s + 64])[real].sum())
            total += int(real.sum())
        if total and n < len(ids):
            break
    return right / max(1, total)


def finished(out: Path, hf: Path) -> bool:
    """A run that reached its max_steps and was exported (what --reuse keeps)."""
    try:
        steps = json.loads((out / "hparams.json").read_text())["max_steps"]
    except (OSError, ValueError, KeyError):
        return False
    return (out / "checkpoints" / f"ckpt_{steps:08d}").is_dir() and (hf / "config.json").exists()


def spread(scores: list[float]) -> str:
    """Mean ± sd (n) of per-seed scores, as the tables print them."""
    sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
    return f"{statistics.mean(scores):.4f} ± {sd:.4f} (n={len(scores)})"


def configs(work: Path, vocab_size: int) -> dict:
    paths = {}
    for name, cfg in (("2019", BERT), ("modern", MODERN)):
        paths[name] = work / f"model_{name}.json"
        paths[name].write_text(json.dumps({**cfg, "vocab_size": vocab_size}, indent=1))
    return paths


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path("/tmp/w2b_probe/data"))
    p.add_argument("--lang", default="uk")
    p.add_argument("--budget", default="30m", help="--train_budget of each run")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_bench_recipes"))
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--eval_rows", type=int, default=2000)
    p.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    p.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs of the probe")
    p.add_argument("--baseline", nargs="*", default=[], choices=list(RECIPES),
                   help="also fine-tune these recipes' architectures from random init")
    p.add_argument("--reuse", action="store_true",
                   help="keep a finished run, its export and its finished fine-tuning seeds")
    p.add_argument("--runs", type=int, default=None,
                   help="seeds 1..RUNS instead of --seeds (bench/run_all.py passes --runs)")
    args = p.parse_args(argv)
    if args.runs:
        args.seeds = ",".join(str(i) for i in range(1, args.runs + 1))
    data = args.data / args.lang
    if not all((data / d).exists() for d in ("sharded", "vocab", "probe")):
        print(f"skipped: {data} lacks sharded/, vocab/ or probe/ (run bench/bench_probe.py)")
        return 0
    work = args.work / args.lang
    work.mkdir(parents=True, exist_ok=True)
    log = work / "bench.log"
    sets = encode_sets(args.data, args.lang, work)
    vocab = data / "vocab" / "vocab.txt"
    vocab_size = -(-sum(1 for _ in open(vocab, encoding="utf-8")) // 8) * 8
    cfgs = configs(work, vocab_size)
    rows = []
    for name in args.recipes:
        out, hf, ft = work / f"run_{name}", work / f"hf_{name}", work / f"probe_{name}"
        wall_file = out / "bench_wall.json"
        if not (args.reuse and finished(out, hf)):
            shutil.rmtree(out, ignore_errors=True)
            wall = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        f"--nproc_per_node={args.ranks}", "trainer/run_pretraining.py",
                        "--model_config", cfgs[name], "--input_dir", sets[name],
                        "--vocab_file", vocab, "--output_dir", out, "--train_budget", args.budget,
                        *COMMON, *RECIPES[name]], log, env={"OMP_NUM_THREADS": "1"})
            wall_file.write_text(json.dumps({"wall_s": wall}))
            run([sys.executable, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf],
                log)
        if not args.reuse:
            shutil.rmtree(ft, ignore_errors=True)
        baseline = ["--baseline", "random-init"] if name in args.baseline else []
        run([sys.executable, "-m", "trainer.finetune", "--model", hf, "--probe", data,
             "--output_dir", ft, "--seeds", args.seeds, *FINETUNE, "--epochs", args.epochs,
             "--max_seq_length", "128", *baseline], log)
        results = json.loads((ft / "results.json").read_text())
        hp = json.loads((out / "hparams.json").read_text())
        wall = json.loads(wall_file.read_text())["wall_s"] if wall_file.exists() else float("nan")
        rows.append({"recipe": name, "steps": hp["max_steps"], "wall": wall,
                     "acc": mlm_accuracy(hf, sets["heldout"], args.eval_rows),
                     "f1": spread(results["pretrained"]["scores"]),
                     "random": spread(results["random_init"]["scores"])
                     if "random_init" in results else None})
    print(f"{args.lang}, --train_budget {args.budget} per run on {args.ranks} CPU ranks, "
          f"probe seeds {args.seeds}")
    print("| recipe | steps | wall (s, with start-up) | MLM acc at 15% (held-out packed rows) | "
          "probe entity F1 | random init, same architecture |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        rand = "not run" if r["random"] is None else r["random"]
        print(f"| {r['recipe']} | {r['steps']:,} | {r['wall']:.0f} | {r['acc']:.4f} | {r['f1']} "
              f"| {rand} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
