"""What a fine-tuning run says before and while it works: the start line, one line per finished
(variant, seed) with the time left, a line for each seed reused from an earlier run; and the
training-set limit that keeps a CPU run to minutes.

Usage:
    limit = train_limit(args, device)              # None: every row
    rows = limited_rows(feats.rows, limit)         # the same subset for every seed and variant
    log.info(start_line(task, model, args, variants, counts, limit, device, n_rates))
    plan = Plan(total=6); plan.trained(41.2, "pretrained seed 1 ...: entity_f1 0.61 ...")
    print(summary_line(results))                   # the closing line: mean ± sd of each variant
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field

from common.numbers import plural
from common.progress import duration, eta_text
from trainer.finetune.task_table import TASKS

log = logging.getLogger("trainer.finetune")

# On CPU a seed of the probe took 5.5 minutes on 7,325 sentences (a BERT 4 x 256, 3 epochs);
# 2,000 rows keep a seed to about 1.5 minutes there. On a GPU every row is cheap.
CPU_TRAIN_LIMIT = 2000
SUBSET_SEED = 0   # the subset does not depend on the fine-tuning seed: every seed sees the same


def train_limit(args, device) -> int | None:
    """--max_train_examples: N, 0 for every row, default CPU_TRAIN_LIMIT on CPU, all on a GPU."""
    given = getattr(args, "max_train_examples", None)
    if given is None:
        return CPU_TRAIN_LIMIT if device.type == "cpu" else None
    return given or None


def limited_rows(rows: list, limit: int | None) -> list:
    """At most `limit` rows, a seeded sample kept in file order (all of them if fewer)."""
    if limit is None or len(rows) <= limit:
        return rows
    keep = sorted(random.Random(SUBSET_SEED).sample(range(len(rows)), limit))
    return [rows[i] for i in keep]


def start_line(task, model, args, variants, counts: dict, limit, device, n_rates: int) -> str:
    examples = counts["examples"]
    rows, used = counts["train_rows"], counts["train_rows_used"]
    training = f"{used:,} training rows"
    if used < rows:
        training += (f" (of {rows:,}: --max_train_examples {limit}"
                     f"{', the CPU default' if getattr(args, 'max_train_examples', None) is None else ''}"
                     "; 0 trains on all)")
    splits = ", ".join(f"{examples[s]:,} {s}" for s in ("train", "validation", "test") if s in examples)
    runs = len(variants) * (len(args.seeds) + (n_rates - 1 if n_rates > 1 else 0))
    names = " + ".join(v.replace("_", " ") for v in variants)
    steps = max(1, -(-used // args.batch_size)) * args.epochs
    log_file = getattr(args, "log_file", None)
    return (f"fine-tuning {model} on {task.name} ({splits} examples; {training}): {names}, seeds "
            f"{','.join(map(str, args.seeds))}: {plural(runs, 'run')} of about {steps:,.0f} steps on "
            f"{device}" + (f"; log: {log_file}" if log_file else ""))


@dataclass
class Plan:
    """Counts finished runs and says how long the rest will take (from the trained ones)."""

    total: int
    quiet: bool = False
    done: int = 0
    trained_seconds: float = 0.0
    trained_runs: int = 0
    started: float = field(default_factory=time.perf_counter)

    def _say(self, text: str) -> None:
        if not self.quiet:
            log.info("%s", text)

    def reused(self, text: str) -> None:
        self.done += 1
        self._say(f"[{self.done}/{self.total}] {text}")

    def trained(self, seconds: float, text: str) -> None:
        self.done += 1
        self.trained_runs += 1
        self.trained_seconds += seconds
        left = self.total - self.done
        eta = eta_text(self.trained_runs, self.trained_runs + left, self.trained_seconds)
        self._say(f"[{self.done}/{self.total}] {text} in {duration(seconds)}"
                  + (f"; {eta}" if eta else ""))


def default_length(task: str) -> int:
    """--max_seq_length's default (task_table.py: 384 pieces for qa, else 128)."""
    return TASKS[task].max_length


def summary_line(results: dict) -> str:
    metric = results["metric"]
    parts = []
    for variant, name in (("pretrained", "pretrained"), ("random_init", "random init")):
        if variant in results:
            r = results[variant]
            parts.append(f"{name} {r['mean']:.4f} ± {r['sd']:.4f}")
    examples = results["data"]["examples"]
    split = results["evaluated_on"]
    cut = sum(results["data"].get("windowed", {}).values())
    trunc = sum(results["data"].get("truncated", {}).values())
    return (f"{results['task']} {metric} on {split} ({examples.get(split, 0):,} examples, "
            f"{plural(len(results['seeds']), 'seed')}; in all splits {cut} split into windows, {trunc} cut): "
            + ", ".join(parts) + f" [{results['seconds']:.0f} s]")
