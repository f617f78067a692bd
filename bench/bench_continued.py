"""Continued pretraining at an equal budget: a model pretrained on one language (uk), then trained
on another (vi) four ways, against each other on vi's probe; prints a table.

Usage:
    .venv/bin/python bench/bench_continued.py --data /tmp/w2b_36/data --work /tmp/w2b_36/work
    .venv/bin/python bench/bench_continued.py ... --base_steps 60 --steps 30 --seeds 1   # smoke

Input: DATA/{uk,vi}/{sharded,vocab,probe} as `pipeline run --vocab-size 8000` and `pipeline probe`
leave them (bench/bench_probe.py's preparation). Per family (`modern`: ModernBERT 4x256 with the
modern recipe, packed rows, dynamic 30% mask-only, AdamW 1e-3, wsd; `2019`: BERT 4x256 with
NVIDIA's, pairs, static masks, MLM + NSP, LAMB 1e-2, poly):

  base   uk, own uk vocab, --base_steps (1,300: what one CPU core did in 30 minutes unloaded)
  (a)    vi encoded with the uk vocab, --init_from base: continued with its own uk vocab
  (b)    vi encoded with the vi vocab, --init_from base --vocab_file vi: the vocabulary adapted
         (shared rows kept, new rows the mean of their uk pieces)
  (c)    as (b) with --new_token_init random: the same vi vocab, new rows random
  (d)    vi with the vi vocab from random weights

(a)-(d) train --steps (650: 15 minutes) each with the family's recipe, unchanged: only the start
differs. An equal budget is an equal number of optimizer steps at the same batch, so that the
machine's load (it is shared) changes the wall time, not the comparison. Then each is exported
and measured the same way: the vi probe's entity F1 (`python -m trainer.finetune --probe`, mean ±
sd over --seeds) and the masked-LM accuracy on vi's held-out packed rows at 15% (their static
masks; (a)'s rows are encoded with the uk vocab, so its figure predicts other tokens). Finished
runs, exports and fine-tuned seeds are reused on a rerun (a killed run resumes).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_probe import FINETUNE, run  # noqa: E402
from bench_recipes import BERT, MODERN, mlm_accuracy  # noqa: E402

COMMON = ["--device", "cpu", "--precision", "fp32", "--train_batch_size", "32", "--log_every", "20",
          "--no-tensorboard", "--warmup_proportion", "0.06", "--seed", "42", "--eval_max_samples", "2000"]
RECIPES = {
    "modern": ["--masking", "dynamic", "--mlm_probability", "0.3", "--mask_replace_prob", "1.0",
               "--random_replace_prob", "0.0", "--optimizer", "adamw", "--learning_rate", "1e-3",
               "--lr_schedule", "wsd"],
    "2019": ["--masking", "static", "--optimizer", "lamb", "--learning_rate", "1e-2", "--lr_schedule", "poly"],
}
ARCH = {"modern": ("modernbert", MODERN), "2019": ("bert", BERT)}
VARIANTS = ("a", "b", "c", "d")
WORDS = {"a": "continued, own uk vocab", "b": "continued, vi vocab adapted",
         "c": "continued, vi vocab, new rows random", "d": "from scratch, vi vocab"}


def encode_sets(data: Path, work: Path) -> dict:
    """{(lang, vocab lang, recipe or "heldout"): HDF5 folder}."""
    from pipeline.stages.encode import encode

    kinds = {"modern": dict(max_seq=128, max_pred=40, masked_lm_prob=0.3, dupe_factor=1, pack=True),
             "2019": dict(max_seq=128, max_pred=20, masked_lm_prob=0.15, dupe_factor=5),
             "heldout": dict(max_seq=128, max_pred=20, masked_lm_prob=0.15, dupe_factor=1, pack=True)}
    out = {}
    for lang, vocab_lang in (("uk", "uk"), ("vi", "vi"), ("vi", "uk")):
        for name, kw in kinds.items():
            if lang == "uk" and name == "heldout":
                continue
            summary = encode(data_dir=data, lang=lang, workers=2, vocab=data / vocab_lang / "vocab",
                             output=work / "hdf5" / f"{lang}_vocab_{vocab_lang}", **kw)
            out[lang, vocab_lang, name] = Path(summary["output"]).parent
    return out


def finished(out: Path, steps: int) -> bool:
    return (out / "checkpoints" / f"ckpt_{steps:08d}").is_dir()


def train(out: Path, argv: list, steps: int, log: Path) -> None:
    if not finished(out, steps):
        run([sys.executable, "trainer/run_pretraining.py", *argv, "--output_dir", out, "--max_steps", steps,
             "--checkpoint_every", max(1, steps // 4), "--eval_every", max(1, steps // 4),
             "--resume_from_checkpoint", *COMMON], log, env={"OMP_NUM_THREADS": "1"})


def export(out: Path, hf: Path, log: Path) -> None:
    if not (hf / "config.json").is_file():
        run([sys.executable, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf], log)


def spread(scores: list[float]) -> str:
    sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
    return f"{statistics.mean(scores):.4f} ± {sd:.4f}"


def one_family(family: str, sets: dict, args, log: Path) -> list[dict]:
    data, work = args.data, args.work / family
    work.mkdir(parents=True, exist_ok=True)
    model_type, shape = ARCH[family]
    cfg = work / "model.json"
    cfg.write_text(json.dumps({**shape, "vocab_size": 8000}, indent=1))
    base = work / "base_uk"
    train(base, ["--model_type", model_type, "--model_config", cfg, "--vocab_file", data / "uk" / "vocab",
                 "--input_dir", sets["uk", "uk", family], *RECIPES[family]], args.base_steps, log)
    starts = {
        "a": ["--init_from", base, "--vocab_file", data / "uk" / "vocab", "--input_dir", sets["vi", "uk", family]],
        "b": ["--init_from", base, "--vocab_file", data / "vi" / "vocab", "--input_dir", sets["vi", "vi", family]],
        "c": ["--init_from", base, "--vocab_file", data / "vi" / "vocab", "--input_dir", sets["vi", "vi", family],
              "--new_token_init", "random"],
        "d": ["--model_type", model_type, "--model_config", cfg, "--vocab_file", data / "vi" / "vocab",
              "--input_dir", sets["vi", "vi", family]],
    }
    rows = []
    for v in args.variants:
        out, hf, ft = work / f"vi_{v}", work / f"hf_{v}", work / f"probe_{v}"
        train(out, [*starts[v], *RECIPES[family]], args.steps, log)
        export(out, hf, log)
        run([sys.executable, "-m", "trainer.finetune", "--model", hf, "--probe", data / "vi", "--output_dir", ft,
             "--seeds", args.seeds, *FINETUNE, "--epochs", args.epochs, "--max_seq_length", "128"], log)
        scores = json.loads((ft / "results.json").read_text())["pretrained"]["scores"]
        heldout = sets["vi", "uk" if v == "a" else "vi", "heldout"]
        rows.append({"family": family, "variant": v, "f1": scores,
                     "acc": mlm_accuracy(hf, heldout, args.eval_rows)})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path("/tmp/w2b_36/data"))
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_36/work"))
    p.add_argument("--families", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    p.add_argument("--base_steps", type=int, default=1300)
    p.add_argument("--steps", type=int, default=650)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--eval_rows", type=int, default=2000)
    p.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs of the probe")
    args = p.parse_args(argv)
    if not all((args.data / lang / d).exists() for lang in ("uk", "vi") for d in ("sharded", "vocab", "probe")):
        print(f"skipped: {args.data} lacks uk/ or vi/ sharded, vocab and probe (see the docstring)")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "bench.log"
    sets = encode_sets(args.data, args.work)
    rows = [r for family in args.families for r in one_family(family, sets, args, log)]
    print(f"uk base {args.base_steps} steps, then vi {args.steps} steps each; batch 32, one CPU rank; "
          f"vi probe seeds {args.seeds}")
    print("| family | vi run | probe entity F1 (mean ± sd) | MLM acc at 15% (vi held-out) |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['family']} | ({r['variant']}) {WORDS[r['variant']]} | {spread(r['f1'])} | {r['acc']:.4f} |")
    (args.work / "results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
