"""One fine-tuning experiment: a task, a model, seeds, and the random-init baseline beside it.

Usage:
    results = finetune_model(args.model, task, args, output_dir)   # writes results.json
    results = finetune_run(args.run, task, args, output_dir)       # each --every-th checkpoint

Each (variant, seed) trains a fresh copy from the same folder: weights and sample order are
decided by the seed alone. Scores are taken on the test split (the validation split where
there is none) after the last epoch; validation scores are kept beside them.
"""
from __future__ import annotations

import logging
import random
import time
from pathlib import Path

from common.atomic import write_json_atomic as write_json
from common.atomic import write_text_atomic
from trainer.checkpoint import checkpoint_step, list_checkpoints
from trainer.finetune.loop import LoopSettings, pick_device, train
from trainer.finetune.plan import Plan, limited_rows, start_line, train_limit
from trainer.finetune.readers import FinetuneDataError
from trainer.finetune.results import SeedCache, aggregate, settings_key
from trainer.finetune.source import build_model, load_tokenizer, max_positions, model_folder

log = logging.getLogger("trainer.finetune")
VARIANTS = {"pretrained": True, "random_init": False}


def loop_settings(args, learning_rate: float) -> LoopSettings:
    return LoopSettings(epochs=args.epochs, learning_rate=learning_rate,
                        batch_size=args.batch_size, warmup_ratio=args.warmup_ratio,
                        weight_decay=args.weight_decay)


def _seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _one_seed(folder: Path, task, tokenizer, train_rows, variant: str, seed: int, lr: float,
              args, max_length: int, device, output_dir: Path) -> dict:
    _seed_everything(seed)
    model = build_model(folder, task.kind, labels=task.labels, pretrained=VARIANTS[variant])
    stats = train(model, train_rows, loop_settings(args, lr), seed=seed, device=device,
                  pad_id=tokenizer.pad_token_id, desc=f"{variant} seed {seed} lr {lr:g}")
    record = {"seed": seed, "variant": variant, "learning_rate": lr, "train": stats}
    eval_split = "test" if "test" in task.splits else "validation"
    for split in ("validation", "test"):
        if split not in task.splits:
            continue
        scores, predictions = task.evaluate(model, tokenizer, split, max_length, device,
                                            batch_size=128)
        record[split] = {k: round(float(v), 6) for k, v in scores.items()}
        if split == eval_split:
            path = output_dir / "predictions" / f"{variant}_seed{seed}{task.prediction_suffix}"
            write_text_atomic(path, lambda fh, split=split, predictions=predictions:
                              task.write_predictions(fh, split, predictions))
    if eval_split == "validation":
        record["test"] = record["validation"]
    return record


def finetune_model(model: str | Path, task, args, output_dir: Path, *,
                   variants: tuple[str, ...] | None = None, quiet: bool = False) -> dict:
    """Fine-tune `model` on `task` for every seed (and the baseline); write results.json."""
    output_dir = Path(output_dir)
    if variants is None:
        variants = ("pretrained", "random_init") if args.baseline else ("pretrained",)
    device = pick_device(args.device)
    start = time.perf_counter()
    with model_folder(model) as folder:
        max_length = min(args.max_seq_length, max_positions(folder))
        tokenizer = load_tokenizer(folder, max_length)
        train_feats = task.features(tokenizer, "train", max_length, train=True)
        limit = train_limit(args, device)
        train_rows = limited_rows(train_feats.rows, limit)
        counts = _data_counts(task, tokenizer, max_length, train_feats)
        counts["train_rows_used"] = len(train_rows)
        grid = list(args.learning_rate)
        # a grid: every rate with the first seed, then every seed at the chosen rate (its first
        # seed is one of the tried ones, and says "reused")
        per_variant = len(args.seeds) + (len(grid) if len(grid) > 1 else 0)
        plan = Plan(total=len(variants) * per_variant, quiet=quiet)
        if not quiet:
            log.info("%s", start_line(task, model, args, variants, counts, limit, device, len(grid)))

        def record_for(variant: str, seed: int, lr: float) -> dict:
            settings = {"model": str(Path(model).resolve()), "task": task.name,
                        "max_length": max_length, **vars(loop_settings(args, lr)),
                        "mtime": _model_stamp(folder), "train_rows": len(train_rows)}
            if getattr(args, "data_stamp", None):   # a dataset's splits: their fingerprints
                settings["data"] = args.data_stamp
            key = settings_key(settings, [f for f in args.files.values() if isinstance(f, Path)])
            cache = SeedCache(output_dir, key, lr if len(grid) > 1 else None)
            record = cache.get(variant, seed)
            if record is not None:
                plan.reused(f"{variant} seed {seed} lr {lr:g}: {task.metric} "
                            f"{record['test'][task.metric]:.4f}, reused from "
                            f"{cache.path(variant, seed)} (finished earlier with these settings)")
                return record
            t0 = time.perf_counter()
            record = _one_seed(folder, task, tokenizer, train_rows, variant, seed, lr,
                               args, max_length, device, output_dir)
            cache.put(variant, seed, record)
            plan.trained(time.perf_counter() - t0,
                         f"{variant} seed {seed} lr {lr:g}: {task.metric} "
                         f"{record['test'][task.metric]:.4f} (validation "
                         f"{record['validation'][task.metric]:.4f}; {record['train']['steps']} "
                         f"steps, {record['train']['examples_per_s'] or 0:.0f} examples/s)")
            return record

        by_variant: dict[str, list[dict]] = {}
        chosen: dict[str, dict] = {}
        for variant in variants:
            lr, tried = grid[0], None
            if len(grid) > 1:   # the first seed at every rate; the best validation score wins
                tried = {g: record_for(variant, args.seeds[0], g)["validation"][task.metric]
                         for g in grid}
                lr = max(grid, key=lambda g: tried[g])
                chosen[variant] = {"learning_rate": lr, "validation_by_rate": {
                    f"{g:g}": round(v, 6) for g, v in tried.items()}}
            by_variant[variant] = [record_for(variant, seed, lr) for seed in args.seeds]
    results = {
        "task": task.name, "metric": task.metric, "model": str(model),
        "evaluated_on": "test" if "test" in task.splits else "validation",
        "files": {k: str(v) for k, v in args.files.items() if v is not None},
        "seeds": list(args.seeds), "max_seq_length": max_length, "device": str(device),
        "settings": vars(loop_settings(args, grid[0])), "data": counts, "notes": task.notes,
    }
    results["settings"]["max_train_examples"] = limit
    if len(grid) > 1:
        results["settings"]["learning_rate"] = grid
        results["learning_rate_selection"] = chosen
    if getattr(args, "probe", None):
        results["probe"] = str(args.probe)
    if getattr(args, "dataset_info", None):
        results["dataset"] = args.dataset_info
    if getattr(task, "normalizer", None):
        results["answer_normalizer"] = task.normalizer
    for variant, records in by_variant.items():
        results[variant] = aggregate(records, task.metric)
    results["seconds"] = round(time.perf_counter() - start, 1)
    write_json(output_dir / "results.json", results)
    return results


def _model_stamp(folder: Path) -> list:
    return sorted((f.name, f.stat().st_size) for f in folder.iterdir() if f.is_file())


def _data_counts(task, tokenizer, max_length: int, train_feats) -> dict:
    """Examples per split, and how many were split into windows or cut (never silently)."""
    counts = {"examples": {split: task.size(split) for split in task.splits},
              "train_rows": len(train_feats.rows)}
    for split in task.splits:
        feats = train_feats if split == "train" else task.features(tokenizer, split, max_length,
                                                                  train=False)
        counts.setdefault("windowed", {})[split] = feats.windows
        counts.setdefault("truncated", {})[split] = feats.truncated
        if feats.no_piece_words:
            counts.setdefault("words_without_pieces", {})[split] = feats.no_piece_words
    return counts


def select_checkpoints(checkpoints: list[Path], every: int) -> list[Path]:
    """Every `every`-th checkpoint, oldest first, and always the newest."""
    chosen = checkpoints[every - 1::every]
    if checkpoints and (not chosen or chosen[-1] != checkpoints[-1]):
        chosen.append(checkpoints[-1])
    return chosen


def finetune_run(run_dir: str | Path, task, args, output_dir: Path) -> dict:
    """Fine-tune the chosen checkpoints of a trainer run; the random-init baseline once.
    Each checkpoint's results go to OUTPUT_DIR/checkpoints/step_N/ (kept across reruns)."""
    run_dir, output_dir = Path(run_dir), Path(output_dir)
    checkpoints = list_checkpoints(run_dir)
    if not checkpoints:
        raise FinetuneDataError(f"--run {run_dir}: no complete checkpoint under "
                                f"{run_dir}/checkpoints; train with --checkpoint_every first")
    rows = []
    chosen = select_checkpoints(checkpoints, args.every)
    log.info("fine-tuning %d checkpoint(s) of %s (steps %s) on %s, seeds %s%s%s", len(chosen),
             run_dir, ", ".join(str(checkpoint_step(c)) for c in chosen), task.name,
             ",".join(map(str, args.seeds)), ", then random init once" if args.baseline else "",
             f"; log: {args.log_file}" if getattr(args, "log_file", None) else "")
    for ckpt in chosen:
        step = checkpoint_step(ckpt)
        sub = finetune_model(ckpt, task, args, output_dir / "checkpoints" / f"step_{step:08d}",
                             variants=("pretrained",), quiet=True)
        log.info("step %d: %s %.4f ± %.4f", step, task.metric, sub["pretrained"]["mean"],
                 sub["pretrained"]["sd"])
        rows.append({"step": step, "checkpoint": str(ckpt),
                     **{k: sub["pretrained"][k] for k in ("mean", "sd", "scores")}})
    results = dict(sub, run=str(run_dir), checkpoints=rows, model=str(checkpoints[-1]))
    if args.probe:
        results["probe"] = str(args.probe)
    if args.baseline:
        base = finetune_model(checkpoints[-1], task, args, output_dir / "random_init",
                              variants=("random_init",), quiet=True)
        results["random_init"] = base["random_init"]
    write_json(output_dir / "results.json", results)
    return results
