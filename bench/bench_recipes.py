"""The 2019 recipe against the modern one, and the modern one against itself with attention
across documents, at an equal wall-clock budget; prints one table.

Usage:
    .venv/bin/python bench/bench_recipes.py --lang uk --budget 300s --seeds 1,2 --size tiny
    .venv/bin/python bench/bench_recipes.py --lang uk --budget 30m --seeds 1,2,3    # make pretrain's CPU size
    .venv/bin/python bench/bench_recipes.py --lang uk --budget 2m --seeds 1 --epochs 1 --rates 5e-4   # smoke

Input: DATA/LANG/{sharded,vocab,probe} as `pipeline run` + `pipeline probe` leave them
(bench/bench_probe.py makes them in /tmp/w2b_probe/data from ../shared/data). Into --work:

- 2019: `encode` pairs 128/20 at 15%, --dupe-factor 5; a post-norm BERT with MLM + NSP, static
  masks, LAMB 1e-2, `poly`.
- modern: `make pretrain`'s recipe: `encode --pack` 128/40 at 30%, --dupe-factor 1 (packed
  layout 2: `[CLS] doc [SEP]` segments, articles continuing across rows); a ModernBERT of about
  the same parameter count without the embeddings, MLM only, dynamic 30% masks with BERT's
  80/10/10 split (80% [MASK], 10% random, 10% kept), AdamW, `wsd`, attention within documents
  (the default on rows with doc_starts: positions restart at each document).
- modern-across: the same with `--doc_attention across` (one sequence a row, as before layout 2).
- modern-mask-only: the same with every masked token a [MASK] (`--mask_replace_prob 1.0`): the
  modern recipe until issue 56, an ablation now, not run by default.
  The packed layout before (layout 1: one [CLS] a row, no doc_starts) cannot be made any more:
  `encode --pack` writes layout 2 only, so it is not a recipe here.

--size small is make pretrain's CPU model (4 layers x 256, trainer/configs/modernbert_small.json;
modern at AdamW 1e-3 as make pretrain), --size tiny the issue-56 one (2 x 128, modern at 2e-3).
Each run trains on --ranks CPU ranks (torchrun, one thread each) with --train_budget BUDGET,
batch 32 a rank, and evaluates once at its end on its own test files (its own masks and
attention). Then each export is measured the same way: MLM accuracy at the same static 15%
masks of the same held-out rows (`encode --pack` 128/20, its test files) through transformers'
AutoModelForMaskedLM, read as whole packed rows and one document at a time
(bench/recipe_measures.py says why both), and the probe's entity F1 (`python -m
trainer.finetune --probe`, mean ± sd over --seeds) with the learning rate chosen on validation
per model from --rates (5e-5 to 5e-3 by default: past where every model so far peaked).
Reported: steps reached, wall time, the train MLM loss curve, both accuracies, the chosen rate
and the validation F1 at every rate. Finished encodes are reused; runs and fine-tunings start
over (--reuse keeps a finished run, its export and its finished fine-tuning seeds).
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
sys.path.insert(0, str(ROOT / "bench"))   # imported by tests and other benches, not only run
from bench_probe import run  # noqa: E402
from recipe_measures import loss_curve, mlm_accuracies  # noqa: E402

# (BERT, ModernBERT, the modern recipe's AdamW rate) a size
SIZES = {
    "small": ({"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
               "intermediate_size": 1024, "max_position_embeddings": 512, "type_vocab_size": 2},
              {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
               "intermediate_size": 672, "max_position_embeddings": 512,
               "global_attn_every_n_layers": 3, "local_attention": 64}, "1e-3"),
    "tiny": ({"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
              "intermediate_size": 512, "max_position_embeddings": 512, "type_vocab_size": 2},
             {"hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
              "intermediate_size": 336, "max_position_embeddings": 512,
              "global_attn_every_n_layers": 3, "local_attention": 64}, "2e-3"),
}
COMMON = ["--device", "cpu", "--precision", "fp32", "--train_batch_size", "32",
          "--log_every", "10", "--checkpoint_every", "100000", "--no-tensorboard",
          "--eval_every", "100000", "--eval_max_samples", "2000",
          "--warmup_proportion", "0.06", "--seed", "42"]
MODERN_FLAGS = ["--model_type", "modernbert", "--no_nsp", "--masking", "dynamic",
                "--mlm_probability", "0.3", "--optimizer", "adamw", "--lr_schedule", "wsd"]
BERT_SPLIT = ["--mask_replace_prob", "0.8", "--random_replace_prob", "0.1"]
MASK_ONLY = ["--mask_replace_prob", "1.0", "--random_replace_prob", "0.0"]
# recipe: (its data set, its model, its flags; the modern rate is added by --size)
RECIPES = {
    "2019": ("2019", "bert", ["--model_type", "bert", "--masking", "static", "--optimizer", "lamb",
                              "--learning_rate", "1e-2", "--lr_schedule", "poly"]),
    "modern": ("modern", "modern", [*MODERN_FLAGS, *BERT_SPLIT, "--doc_attention", "within"]),
    "modern-across": ("modern", "modern", [*MODERN_FLAGS, *BERT_SPLIT, "--doc_attention", "across"]),
    # an ablation, not run by default: the modern recipe before issue 56, every mask a [MASK]
    "modern-mask-only": ("modern", "modern", [*MODERN_FLAGS, *MASK_ONLY, "--doc_attention", "within"]),
}
BERT, MODERN = SIZES["small"][:2]   # bench_continued.py and bench_multilingual.py build these
RATES = "5e-5,2e-4,5e-4,1e-3,2e-3,5e-3"


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
    """Accuracy at the static 15% masks of the held-out packed rows read whole (the figure
    bench_continued.py reports)."""
    return mlm_accuracies(hf_dir, heldout, max_rows, mask_id(heldout))["rows"]


def mask_id(data: Path) -> int:
    """[MASK]'s id in the language's vocab.txt (DATA/LANG/vocab; 103 in our vocabs), or 103."""
    for d in (data, *data.parents):
        vocab = d / "vocab" / "vocab.txt"
        if vocab.is_file():
            return vocab.read_text(encoding="utf-8").splitlines().index("[MASK]")
    return 103


def finished(out: Path, hf: Path) -> bool:
    """A run that ended (its last train_log line is the budget's summary, or its plan's last
    step has a checkpoint) and was exported: what --reuse keeps. The budget re-plans the end, so
    hparams.json's max_steps is the first plan, not the step reached."""
    try:
        last = json.loads((out / "train_log.jsonl").read_text().splitlines()[-1])
        steps = json.loads((out / "hparams.json").read_text())["max_steps"]
    except (OSError, ValueError, KeyError, IndexError):
        return False
    ended = "budget_spent_s" in last or (out / "checkpoints" / f"ckpt_{steps:08d}").is_dir()
    return ended and (hf / "config.json").exists()


def steps_reached(out: Path) -> int:
    """The last step train_log.jsonl records (what the re-planned budget reached)."""
    lines = (out / "train_log.jsonl").read_text().splitlines()
    return max(json.loads(line)["step"] for line in lines if line.strip())


def spread(scores: list[float]) -> str:
    """Mean ± sd (n) of per-seed scores, as the tables print them."""
    sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
    return f"{statistics.mean(scores):.4f} ± {sd:.4f} (n={len(scores)})"


def configs(work: Path, vocab_size: int, size: str) -> dict:
    bert, modern, _ = SIZES[size]
    paths = {}
    for name, cfg in (("bert", bert), ("modern", modern)):
        paths[name] = work / f"model_{name}_{size}.json"
        paths[name].write_text(json.dumps({**cfg, "vocab_size": vocab_size}, indent=1))
    return paths


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path("/tmp/w2b_probe/data"))
    p.add_argument("--lang", default="uk")
    p.add_argument("--budget", default="30m", help="--train_budget of each run")
    p.add_argument("--size", choices=list(SIZES), default="small",
                   help="small: make pretrain's CPU model (4 x 256); tiny: 2 x 128")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_bench_recipes"))
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--eval_rows", type=int, default=2000)
    p.add_argument("--recipes", nargs="+", default=list(RECIPES)[:3], choices=list(RECIPES),
                   help="default: 2019 modern modern-across (modern-mask-only: the masking ablation)")
    p.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs of the probe")
    p.add_argument("--rates", default=RATES,
                   help=f"fine-tuning learning rates, chosen on validation per model (default {RATES})")
    p.add_argument("--max_train_examples", type=int, default=0,
                   help="probe training rows per fine-tuning (default 0: all)")
    p.add_argument("--reuse", action="store_true",
                   help="keep a finished run, its export and its finished fine-tuning seeds")
    p.add_argument("--runs", type=int, default=None,
                   help="seeds 1..RUNS instead of --seeds (bench/run_all.py passes --runs)")
    args = p.parse_args(argv)
    if args.runs:
        args.seeds = ",".join(str(i) for i in range(1, args.runs + 1))
    return args


def one_recipe(name: str, args, sets: dict, cfgs: dict, work: Path, data: Path, log: Path) -> dict:
    """Train (unless reused), export, measure and fine-tune one recipe; its table row."""
    out, hf, ft = work / f"run_{name}", work / f"hf_{name}", work / f"probe_{name}"
    data_set, model, flags = RECIPES[name]
    if model == "modern":
        flags = [*flags, "--learning_rate", SIZES[args.size][2]]
    wall_file = out / "bench_wall.json"
    if not (args.reuse and finished(out, hf)):
        shutil.rmtree(out, ignore_errors=True)
        wall = run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                    f"--nproc_per_node={args.ranks}", "trainer/run_pretraining.py",
                    "--model_config", cfgs[model], "--input_dir", sets[data_set],
                    "--vocab_file", data / "vocab" / "vocab.txt", "--output_dir", out,
                    "--train_budget", args.budget, *COMMON, *flags], log,
                   env={"OMP_NUM_THREADS": "1"})
        wall_file.write_text(json.dumps({"wall_s": wall}))
        run([sys.executable, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf], log)
    if not args.reuse:
        shutil.rmtree(ft, ignore_errors=True)
    run([sys.executable, "-m", "trainer.finetune", "--model", hf, "--probe", data,
         "--output_dir", ft, "--seeds", args.seeds, "--learning_rate", args.rates,
         "--batch_size", "32", "--epochs", args.epochs, "--max_seq_length", "128",
         "--max_train_examples", args.max_train_examples, "--device", "cpu"], log)
    results = json.loads((ft / "results.json").read_text())
    pick = results.get("learning_rate_selection", {}).get("pretrained", {})
    wall = json.loads(wall_file.read_text())["wall_s"] if wall_file.exists() else float("nan")
    return {"recipe": name, "steps": steps_reached(out), "wall": wall,
            "acc": mlm_accuracies(hf, sets["heldout"], args.eval_rows, mask_id(data)),
            **loss_curve(out),
            "f1": spread(results["pretrained"]["scores"]),
            "rate": pick.get("learning_rate", float(args.rates.split(",")[0])),
            "by_rate": pick.get("validation_by_rate", {})}


def table(rows: list[dict], args) -> None:
    print(f"{args.lang}, --size {args.size}, --train_budget {args.budget} per run on {args.ranks} "
          f"CPU rank(s), probe seeds {args.seeds}, rates {args.rates}, {args.epochs} epochs, "
          f"max_train_examples {args.max_train_examples or 'all'}")
    print("| recipe | steps | wall (s) | train MLM loss (step: loss) | own eval MLM acc | "
          "held-out MLM acc, whole rows | per document | per document, [MASK] only | probe entity F1 | rate chosen |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        curve = ", ".join(f"{s}: {loss:.2f}" for s, loss in r["curve"])
        own = "-" if r["eval_mlm_acc"] is None else f"{r['eval_mlm_acc']:.4f}"
        print(f"| {r['recipe']} | {r['steps']:,} | {r['wall']:.0f} | {curve} | {own} | "
              f"{r['acc']['rows']:.4f} | {r['acc']['docs']:.4f} | "
              f"{r['acc']['docs_mask']:.4f} | {r['f1']} | {r['rate']:g} |")
    rates = args.rates.split(",")
    if len(rates) > 1:
        print("\nprobe validation entity F1 by fine-tuning rate (first seed):")
        print("| recipe | " + " | ".join(rates) + " |")
        print("|---|" + "---|" * len(rates))
        for r in rows:
            vals = [r["by_rate"].get(f"{float(x):g}") for x in rates]
            print(f"| {r['recipe']} | " + " | ".join("-" if v is None else f"{v:.4f}"
                                                   for v in vals) + " |")


def main(argv=None) -> int:
    args = parse(argv)
    data = args.data / args.lang
    if not all((data / d).exists() for d in ("sharded", "vocab", "probe")):
        print(f"skipped: {data} lacks sharded/, vocab/ or probe/ (run bench/bench_probe.py)")
        return 0
    work = args.work / args.lang
    work.mkdir(parents=True, exist_ok=True)
    sets = encode_sets(args.data, args.lang, work)
    vocab = data / "vocab" / "vocab.txt"
    vocab_size = -(-sum(1 for _ in open(vocab, encoding="utf-8")) // 8) * 8
    cfgs = configs(work, vocab_size, args.size)
    rows = [one_recipe(name, args, sets, cfgs, work, data, work / "bench.log")
            for name in args.recipes]
    table(rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
