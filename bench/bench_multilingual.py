"""One model on two languages against two monolingual models at an equal total budget, on each
language's probe, with the cross-lingual transfer of the one model; prints a table.

Usage:
    .venv/bin/python bench/bench_multilingual.py --data /tmp/w2b_36/data --work /tmp/w2b_37
    .venv/bin/python bench/bench_multilingual.py ... --mono_run vi=/tmp/w2b_36/work/modern/vi_d
    .venv/bin/python bench/bench_multilingual.py ... --steps 60 --seeds 1 --epochs 1     # smoke

Input: DATA/{uk,vi}/{sharded,vocab,probe} as `pipeline run --vocab-size 8000` and `pipeline
probe` leave them (each language's own 8k vocab). Into --work, the modern recipe (ModernBERT 4 x
256, packed rows 128/40, dynamic 30% mask-only, AdamW 1e-3, wsd, batch 32, one CPU rank):

  multi  `pipeline --lang uk,vi joint-vocab --vocab-size 16000 --sampling-alpha ALPHA`, both
         languages encoded with it, one model on `--input_dir uk=... --input_dir vi=...
         --sampling_alpha ALPHA` for --steps (1,300: what one CPU core did in 30 minutes)
  mono   a model per language on its own 8k vocab for --steps / 2 each (650: 15 minutes), the
         same total budget; `--mono_run LANG=DIR` reuses a finished run of exactly that setting
         (bench/bench_continued.py's vi (d) is one)

Measured the same way for each: the probe's entity F1 of each language (`python -m
trainer.finetune --probe`, mean ± sd over --seeds, 2,000 training sentences: its CPU default), and for the one
model the transfer both ways (`--probe uk --test_probe vi` and back: fine-tuned on one
language's probe, tested on the other's). An equal budget is an equal number of optimizer steps
at the same batch: the shared machine's load changes the wall time, not the comparison.
Finished runs, exports and fine-tuned seeds are reused on a rerun.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_continued import RECIPES, export, train  # noqa: E402
from bench_probe import FINETUNE, run  # noqa: E402
from bench_recipes import MODERN  # noqa: E402

LANGS = ("uk", "vi")
PACKED = dict(max_seq=128, max_pred=40, masked_lm_prob=0.3, dupe_factor=1, pack=True)


def joint_vocab(data: Path, alpha: float, log: Path) -> Path:
    out = data / "multi" / f"alpha_{alpha:g}" / "vocab"
    if not (out / "manifest.json").is_file():
        run([sys.executable, "-m", "pipeline", "--data-dir", data, "--lang", ",".join(LANGS), "--workers", "2",
             "joint-vocab", "--vocab-size", "16000", "--sampling-alpha", alpha, "--output", out], log)
    return out


def encoded(data: Path, lang: str, vocab: Path, output: Path) -> Path:
    from pipeline.stages.encode import encode

    summary = encode(data_dir=data, lang=lang, workers=2, vocab=vocab, output=output, **PACKED)
    return Path(summary["output"]).parent


def probe(hf: Path, out: Path, data: Path, train_lang: str, test_lang: str, args, log: Path) -> list[float]:
    transfer = ["--test_probe", data / test_lang] if test_lang != train_lang else []
    run([sys.executable, "-m", "trainer.finetune", "--model", hf, "--probe", data / train_lang, *transfer,
         "--output_dir", out, "--seeds", args.seeds, *FINETUNE, "--epochs", args.epochs,
         "--max_seq_length", "128"], log)
    return json.loads((out / "results.json").read_text())["pretrained"]["scores"]


def spread(scores: list[float]) -> str:
    sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
    return f"{statistics.mean(scores):.4f} ± {sd:.4f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path("/tmp/w2b_36/data"))
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_37"))
    p.add_argument("--alpha", type=float, default=0.3)
    p.add_argument("--steps", type=int, default=1300, help="the multilingual run; each monolingual one gets half")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs of the probe")
    p.add_argument("--mono_run", action="append", default=[], metavar="LANG=DIR",
                   help="reuse a finished monolingual run of this setting")
    args = p.parse_args(argv)
    if not all((args.data / lang / d).exists() for lang in LANGS for d in ("sharded", "vocab", "probe")):
        print(f"skipped: {args.data} lacks uk/ or vi/ sharded, vocab and probe (see the docstring)")
        return 0
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    log = work / "bench.log"
    reuse = dict(item.split("=", 1) for item in args.mono_run)
    joint = joint_vocab(args.data, args.alpha, log)
    joint_size = -(-sum(1 for _ in open(joint / "vocab.txt", encoding="utf-8")) // 8) * 8
    cfg = {}
    for name, size in (("multi", joint_size), ("mono", 8000)):
        cfg[name] = work / f"model_{name}.json"
        cfg[name].write_text(json.dumps({**MODERN, "vocab_size": size}, indent=1))
    recipe = ["--model_type", "modernbert", *RECIPES["modern"]]
    sets = {lang: encoded(args.data, lang, joint, work / "hdf5" / f"{lang}_joint") for lang in LANGS}
    multi = work / "multi"
    train(multi, [*recipe, "--model_config", cfg["multi"], "--vocab_file", joint, "--sampling_alpha", args.alpha,
                  *[a for lang in LANGS for a in ("--input_dir", f"{lang}={sets[lang]}")]], args.steps, log)
    export(multi, work / "hf_multi", log)
    monos = {}
    for lang in LANGS:
        monos[lang] = Path(reuse[lang]) if lang in reuse else work / f"mono_{lang}"
        if lang not in reuse:
            own = encoded(args.data, lang, args.data / lang / "vocab", work / "hdf5" / f"{lang}_own")
            train(monos[lang], [*recipe, "--model_config", cfg["mono"], "--vocab_file", args.data / lang / "vocab",
                                "--input_dir", own], args.steps // 2, log)
        export(monos[lang], work / f"hf_mono_{lang}", log)
    rows = []
    for lang in LANGS:
        other = next(x for x in LANGS if x != lang)
        rows.append({"probe": lang,
                     "multi": probe(work / "hf_multi", work / f"probe_multi_{lang}", args.data, lang, lang, args, log),
                     "mono": probe(work / f"hf_mono_{lang}", work / f"probe_mono_{lang}", args.data, lang, lang,
                                   args, log),
                     "transfer": probe(work / "hf_multi", work / f"probe_multi_{other}_to_{lang}", args.data,
                                       other, lang, args, log),
                     "from": other})
    hp = json.loads((multi / "hparams.json").read_text())
    shares = {code: info.get("sampling_shares") for code, info in (hp.get("languages") or {}).items()}
    print(f"multi: uk+vi, joint vocab {joint_size:,} (alpha {args.alpha:g}), {args.steps} steps; mono: own 8k "
          f"vocab, {args.steps // 2} steps each; batch 32, one CPU rank; probe seeds {args.seeds}; "
          f"sampling shares {shares}")
    print("| probe (test) | one model, uk+vi | monolingual model | one model, fine-tuned on the other language |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['probe']} | {spread(r['multi'])} | {spread(r['mono'])} | {spread(r['transfer'])} "
              f"(from {r['from']}) |")
    (work / "results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
