"""What `make pretrain` says about its budget (recipes/pretrain.py): before the run, one line where
the budget is below what was measured to get a model past word frequencies on this device; at
the end, where the model has not got past them, the budget that would, from this run's own pace.

    short_budget_warning("cpu", "5m")     # "warning: BUDGET=5m on a CPU: ..." or ""
    longer_budget_line(run_dir, argv)     # "   train longer: ... `make pretrain ... BUDGET=10m` ..." or ""

The figures (bench/README.md):
- LEARN_STEPS: make pretrain's CPU model (ModernBERT 4 x 256) left the unigram plateau by about
  step 400 on uk and vi (issue 56: train loss under the unigram entropy; 30 minutes, one rank).
  On 2 ranks (64 rows a step) a 5-minute run on uk reached 202 steps and 1.5x the unigram baseline
  (issue 60), the issue's own 5- and 15-minute runs 101 steps and 1.0x, and 5.0x.
- CPU_MIN_BUDGET: on 2 cores (2 gloo ranks) a step took 1.5 s lightly loaded and 4.4 s loaded,
  so 400 steps are 10 to 30 minutes; measured, 5m ended at 1.0-1.5x (issues 52, 60), 10m at
  2.0x (issue 52), 15m at 5.0x (issue 60). On a GPU nothing is measured yet: no line before the
  run; the closing line still reads this run's pace.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from common.make_vars import as_typed
from recipes.pretrain_advice import cpu_budget_below, rerun_command

LEARN_STEPS = 400
CPU_MIN_BUDGET = "15m"
CPU_MEASURED = ("1.0x-1.5x the unigram baseline at 5m, 2.0x at 10m, 5.0x at 15m (2 cores, "
                "1.5-4.4 s a step: bench/README.md, issues 52, 56, 60)")


def short_budget_warning(device: str, budget: str) -> str:
    """One line where a CPU run's budget is under CPU_MIN_BUDGET; "" otherwise (and on a GPU, where
    nothing is measured, and for a budget the trainer will refuse)."""
    if not cpu_budget_below(device, budget, CPU_MIN_BUDGET):
        return ""
    return (f"warning: {as_typed('--budget', budget)} on a CPU: the model needs about {LEARN_STEPS} steps to get "
            f"past word frequencies, measured {CPU_MEASURED}: give {as_typed('--budget', CPU_MIN_BUDGET)} or more "
            "(a shorter run shows that the chain works, not what a model learns)")


def advised_budget(seconds: float) -> str:
    """A budget the trainer reads, rounded up: '10m', '35m' (5 minutes above half an hour), '1.5h'
    (half hours above an hour)."""
    minutes = max(1, math.ceil(seconds / 60))
    if minutes > 60:
        return f"{math.ceil(minutes / 30) / 2:g}h"
    return f"{math.ceil(minutes / 5) * 5 if minutes > 30 else minutes}m"


def run_pace(run_dir: Path) -> tuple[int, float] | None:
    """(steps trained, seconds of the budget's clock they took) from the budget's last record in
    train_log.jsonl; None where there is none (no budget, or a run that did not end)."""
    found = None
    log = Path(run_dir) / "train_log.jsonl"
    if not log.is_file():
        return None
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            if "budget_spent_s" in record and record.get("step"):
                found = (int(record["step"]), float(record["budget_spent_s"]))
        except (ValueError, TypeError, AttributeError):
            continue
    return found


def with_budget(argv: list[str], budget: str) -> list[str]:
    """`argv` with its --budget set to `budget` (added where it was not given)."""
    out, i = [], 0
    while i < len(argv):
        word = str(argv[i])
        if word == "--budget":
            i += 2
            continue
        if not word.startswith("--budget="):
            out.append(word)
        i += 1
    return out + ["--budget", budget]


def longer_budget_line(run_dir: Path, argv: list[str]) -> str:
    """'   train longer: ...': the budget whose steps, at this run's pace (the budget's clock over its
    steps: start-up, evaluations and checkpoints included), reach LEARN_STEPS, or twice this
    run's steps where it trained that many already; "" without a pace."""
    pace = run_pace(run_dir)
    if pace is None:
        return ""
    steps, spent = pace
    target = LEARN_STEPS if steps < LEARN_STEPS else 2 * steps
    budget = advised_budget(target * spent / steps)
    why = (f"about {LEARN_STEPS} steps get make pretrain's model past word frequencies (bench/README.md, issue 56)"
           if steps < LEARN_STEPS else f"it trained {steps} steps, past the {LEARN_STEPS} that were enough "
           "elsewhere (bench/README.md, issue 56): twice as many")
    return (f"   train longer: {why}; this run trained {steps} in {spent:.0f} s ({spent / steps:.2f} s a step "
            f"here), so {as_typed('--budget', budget)} trains about {target}: "
            f"`{rerun_command(with_budget(argv, budget))}` ({as_typed('--budget').strip('= ')} is the whole run's "
            "time)")
