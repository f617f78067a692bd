"""What `make pretrain` does with the run it finds in RUNS/LANG_modern, given --budget (BUDGET), which
is the run's total time: train it, resume it, continue it past its end, or say why not.

    start = continuation(a, out, newest_checkpoint)   # None: train/resume; N: --extend from step N;
                                                      # False: stop (one line said what to do)

A larger BUDGET than the run was planned for continues it from its last checkpoint before the
decay (the trainer's --extend, trainer/start/extension.py): the time spent counts in the total,
the decay is redone at the new end, nothing is re-warmed. The same BUDGET again is a finished run
(not rerun) or a resume; a smaller one is refused in one line that says what to give.
"""
from __future__ import annotations

from pathlib import Path

from common.budget import budget_words, parse_budget
from recipes.commands import read_json, say
from trainer.checkpoint import checkpoint_step, stable_checkpoint
from trainer.start.extension import BUDGET_SAME


def continuation(a, out: Path, newest) -> int | None | bool:
    """What the run in `out` does with --budget, the run's total: None trains (a new run, or a
    resume to the same budget), the step an extension continues from (a larger budget: from the
    last checkpoint before the decay, the decay redone at the new end), False stops (finished
    with this budget, or asked for less: one line says how to continue or restart)."""
    if newest is None:
        return None
    meta = read_json(newest / "meta.json") or {}
    end, planned = meta.get("end_step", meta.get("max_steps")), meta.get("budget_s")
    done = bool(end) and checkpoint_step(newest) >= end
    asked = parse_budget(a.budget)
    if planned is None or abs(asked - planned) <= BUDGET_SAME * planned:
        if done:
            say(f"training: already finished ({end} steps in {out}, BUDGET={a.budget}, the run's total time), "
                f"not rerun: a larger BUDGET continues it from its last checkpoint before the decay, "
                f"--force starts it over")
            return False
        return None
    if asked < planned:
        say(f"training: the run in {out} was planned for BUDGET={budget_words(planned)}; BUDGET={a.budget} is "
            f"less (BUDGET is the run's total time): give BUDGET={budget_words(planned)} to "
            f"{'keep it' if done else 'finish it'}, a larger one to continue it, or --force to start over")
        return False
    stable = stable_checkpoint(out)
    start = checkpoint_step(stable) if stable is not None and meta.get("stable_step") is not None \
        else checkpoint_step(newest)
    say(f"training: the run in {out} ({checkpoint_step(newest)} steps for BUDGET={budget_words(planned)}) continues "
        f"from step {start}, before its decay, to BUDGET={a.budget} in all (the time spent counts in it)")
    return start
