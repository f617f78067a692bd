"""Does a model trained to end on long rows read the long context, at the same budget as one
trained on 128-token rows only? And attention within documents against across? Prints a table.

Usage:
    nice -n 10 .venv/bin/python bench/bench_long_context.py --lang vi --steps 120 --seeds 1,2
    .venv/bin/python bench/bench_long_context.py --lang vi --steps 10 --seeds 1 --context_rows 8   # smoke

Into --work (default /tmp/w2b_long44): the dump ../shared/data/{lang}wiki.xml.xz through `pipeline
run --vocab-size 8000 --no-encode` and `encode --pack` at 128/40, 512/160 and 2,048/640 (30%
static masks, --dupe-factor 1). The model is the demo's ModernBERT
(trainer/configs/demo_modernbert.json: 4 layers, hidden 128, GeGLU 256, global attention in
layers 1 and 4, 64-token windows between), vocab 8,000, trained with the recipe of
trainer/configs/phases_cpu.json as it was measured (dynamic 30% mask-only; the config has 80/10/10
since issue 56; AdamW 2e-3, wsd with a 10% decay) on 2
gloo ranks, one thread each, for --steps steps of the same tokens (2 x 2,048 a step in every
phase):

- short: 128-token rows only, batch 16 a rank, global RoPE θ 10,000;
- long: phases 128 -> 512 -> 2,048 (shares of the steps 0.7 / 0.2 / 0.1, batches 16 / 4 / 1,
  global θ 10k -> 10k -> 160k), attention within each document (the default of layout 2);
- long-across: the same phases with --doc_attention across (a row's documents see each other).

Each run is then measured the same way, on the same held-out data: the context evaluation
(`python -m trainer.evaluation` on the 2,048-token rows' test files: the masked tokens inside
segments of 1,024+ tokens, scored with the whole segment, with 512 and with 128 tokens around
them; the gain is whole minus 512; the short model is scored on the long data too, its RoPE
extrapolated) and the held-out MLM accuracy of recipes/heldout_mlm.py on the 128-token rows'
test files (every token masked once, 15% at a time): the short-context figure. With --probe
also the probe's entity F1 (`python -m trainer.finetune --probe`, a probe of 3,000 training
sentences, --epochs epochs at 5e-4, batch 32, --max_seq_length 128; one fine-tuning seed per
pretraining seed, the same number; minutes a run on CPU). Runs go seed by seed, the variants
interleaved, so the shared machine's load falls on all of them alike. Per variant: the median
over the seeds and [min, max].
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_probe import FINETUNE, PROBE_TRAIN, SHARED, VOCAB_SIZE, run  # noqa: E402

from recipes.long_recipe import LONG, write_phases  # noqa: E402  (make pretrain --long's phases)

PHASES = LONG["cpu"]
ROWS = tuple((p.max_seq, p.max_pred) for p in PHASES)
BATCH = 16   # the first phase's batch a rank; the later ones hold the same tokens a step
RECIPE = ["--model_type", "modernbert", "--no_nsp", "--masking", "dynamic", "--mlm_probability", "0.3",
          "--mask_replace_prob", "1.0", "--random_replace_prob", "0.0", "--optimizer", "adamw",
          "--learning_rate", "2e-3", "--lr_schedule", "wsd", "--warmup_proportion", "0.06",
          "--decay_proportion", "0.1", "--device", "cpu", "--precision", "fp32", "--log_every", "25",
          "--checkpoint_every", "100000", "--no-tensorboard"]
VARIANTS = ("short", "long", "long-across")


def prepare(work: Path, lang: str, probe: bool) -> dict:
    """The corpus, vocab, probe and the three encodes (finished stages are kept)."""
    py, data = sys.executable, work / "data"
    log = work / "prepare.log"
    times = {"pipeline": run([py, "-m", "pipeline", "--data-dir", data, "--lang", lang, "run", "--dump",
                              SHARED / f"{lang}wiki.xml.xz", "--vocab-size", VOCAB_SIZE, "--no-encode"], log)}
    if probe and json.loads((data / lang / "probe" / "manifest.json").read_text())["options"][
            "train_sentences"] != PROBE_TRAIN:
        run([py, "-m", "pipeline", "--data-dir", data, "--lang", lang, "probe", "--train-sentences",
             PROBE_TRAIN, "--force"], log)
    from pipeline.encoding.hdf5_format import output_folder_name

    folders = {}
    for seq, pred in ROWS:
        t = run([py, "-m", "pipeline", "--data-dir", data, "--lang", lang, "encode", "--pack", "--max-seq", seq,
                 "--max-pred", pred, "--masked-lm-prob", "0.3", "--dupe-factor", "1"], log)
        times[f"encode {seq}"] = t
        folders[seq] = data / lang / output_folder_name(False, seq, pred, 0.3, dupe_factor=1, packed=True)
    return {"folders": folders, "times": times, "lang_dir": data / lang}


def model_config(work: Path, vocab: Path) -> Path:
    cfg = json.loads((ROOT / "trainer" / "configs" / "demo_modernbert.json").read_text())
    lines = sum(1 for _ in open(vocab, encoding="utf-8"))
    cfg.update(vocab_size=-(-lines // 64) * 64, global_rope_theta=10_000.0, local_rope_theta=10_000.0)
    path = work / "model.json"
    path.write_text(json.dumps({k: v for k, v in cfg.items() if not k.startswith("_")}, indent=1))
    return path


def train_command(variant: str, seed: int, steps: int, ranks: int, prep: dict, cfg: Path, out: Path) -> list:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={ranks}",
           "trainer/run_pretraining.py", "--model_config", cfg, "--vocab_file", prep["lang_dir"] / "vocab",
           "--output_dir", out, "--max_steps", steps, "--eval_every", 0, "--seed", seed, *RECIPE]
    if variant == "short":
        return cmd + ["--input_dir", prep["folders"][ROWS[0][0]], "--train_batch_size", BATCH]
    phases = write_phases(out.parent / f"phases_{out.name}.json", PHASES,
                          [prep["folders"][seq] for seq, _ in ROWS], BATCH)
    return cmd + ["--phases", phases, "--doc_attention", "across" if variant == "long-across" else "within"]


def one_run(variant: str, seed: int, args, prep: dict, cfg: Path) -> dict:
    py, name = sys.executable, f"{variant}_s{seed}"
    out, hf, work = args.work / "runs" / name, args.work / "hf" / name, args.work
    done = work / "results" / f"{name}.json"
    if args.reuse and done.is_file():
        return json.loads(done.read_text())
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = work / "logs" / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    wall = run(train_command(variant, seed, args.steps, args.ranks, prep, cfg, out), log,
               env={"OMP_NUM_THREADS": "1"})
    run([py, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf], log)
    ctx = work / "results" / f"{name}_context.json"
    ctx.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    run([py, "-m", "trainer.evaluation", "--model", hf, "--input_dir", prep["folders"][2048], "--max_rows",
         args.context_rows, "--json", ctx], log, env={"OMP_NUM_THREADS": "2"})
    context_s = time.perf_counter() - t0
    from recipes.heldout_mlm import heldout_accuracy

    heldout = heldout_accuracy(hf, prep["folders"][128], max_rows=args.heldout_rows)
    probe = [None]
    if args.probe:
        ft = work / "probe" / name
        shutil.rmtree(ft, ignore_errors=True)
        run([py, "-m", "trainer.finetune", "--model", hf, "--probe", prep["lang_dir"], "--output_dir", ft,
             "--seeds", seed, *FINETUNE, "--epochs", args.epochs, "--max_seq_length", "128"], log)
        probe = json.loads((ft / "results.json").read_text())["pretrained"]["scores"]
    log_records = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    last_train = [r for r in log_records if "loss" in r][-1]
    result = {"variant": variant, "seed": seed, "steps": args.steps, "train_s": wall, "context_s": context_s,
              "context": json.loads(ctx.read_text()), "heldout_acc": heldout["accuracy"],
              "heldout_unigram": heldout["unigram_accuracy"],
              "probe_f1": probe[0], "final_loss": last_train["mlm_loss"]}
    done.write_text(json.dumps(result, indent=1))
    return result


def spread(values: list, digits: int = 4) -> str:
    """'median [min, max]' of the seeds ('-' where not measured)."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}, {max(values):.{digits}f}]"


def number(value, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(results: list[dict]) -> None:
    print("| variant | seeds | train s | acc, whole segment | acc, 512 | acc, 128 | context gain (whole - 512) "
          "| held-out MLM acc (128 rows, 15%) | probe entity F1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for variant in VARIANTS:
        rs = [r for r in results if r["variant"] == variant]
        if not rs:
            continue
        c = [r["context"] for r in rs]
        print(f"| {variant} | {','.join(str(r['seed']) for r in rs)} | {spread([r['train_s'] for r in rs], 0)} | "
              f"{spread([x['eval_context_acc_long'] for x in c])} | {spread([x['eval_context_acc_512'] for x in c])} | "
              f"{spread([x['eval_context_acc_128'] for x in c])} | {spread([x['eval_context_gain'] for x in c])} | "
              f"{spread([r['heldout_acc'] for r in rs])} | {spread([r['probe_f1'] for r in rs])} |")
    print()
    print("| run | train s | final train MLM loss | acc whole / 512 / 128 | loss whole / 512 / 128 | gain | "
          "scored tokens | held-out MLM acc (unigram) | probe F1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        c = r["context"]
        accs = " / ".join(f"{c[f'eval_context_acc_{v}']:.4f}" for v in ("long", "512", "128"))
        losses = " / ".join(f"{c[f'eval_context_loss_{v}']:.3f}" for v in ("long", "512", "128"))
        print(f"| {r['variant']} s{r['seed']} | {r['train_s']:.0f} | {r['final_loss']:.3f} | {accs} | {losses} | "
              f"{c['eval_context_gain']:+.4f} | {c['eval_context_tokens']:,} | {r['heldout_acc']:.4f} "
              f"({number(r.get('heldout_unigram'))}) | "
              f"{number(r['probe_f1'])} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lang", default="vi")
    p.add_argument("--work", type=Path, default=Path("/tmp/w2b_long44"))
    p.add_argument("--steps", type=int, default=120, help="optimizer steps of every run (the budget)")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--context_rows", type=int, default=32, help="held-out 2,048-token rows the context "
                   "evaluation reads")
    p.add_argument("--heldout_rows", type=int, default=100, help="held-out 128-token rows of the MLM accuracy")
    p.add_argument("--probe", action="store_true", help="also fine-tune the probe (minutes a run)")
    p.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs of the probe")
    p.add_argument("--reuse", action="store_true", help="keep finished runs' results")
    args = p.parse_args(argv)
    if not (SHARED / f"{args.lang}wiki.xml.xz").is_file():
        print(f"skipped: {SHARED}/{args.lang}wiki.xml.xz is not present")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    prep = prepare(args.work, args.lang, args.probe)
    cfg = model_config(args.work, prep["lang_dir"] / "vocab" / "vocab.txt")
    results = [one_run(variant, int(seed), args, prep, cfg)
               for seed in args.seeds.split(",") for variant in args.variants]
    print(f"{args.lang}: {args.steps} steps a run on {args.ranks} CPU ranks; held-out rows: {args.context_rows} of "
          f"2,048 tokens (context), {args.heldout_rows} of 128 (MLM accuracy); {time.perf_counter() - t0:.0f} s in "
          "all; data: "
          + ", ".join(f"{k} {v:.0f} s" for k, v in prep["times"].items()))
    table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
