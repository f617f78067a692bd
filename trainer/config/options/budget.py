"""The budget's flags: how long the run is, in optimizer steps or in wall-clock time
(trainer/runtime/budget.py and pacing.py plan and re-plan the steps from it)."""
from __future__ import annotations

import argparse

from common.budget import BudgetError, parse_budget
from trainer.config.errors import ConfigError


def add_flags(parser) -> None:
    g = parser.add_argument_group("budget")
    g.add_argument("--max_steps", type=int, default=1000, help="optimizer steps the schedule plans for")
    g.add_argument("--train_budget", default=None,
                   help="wall-clock budget, e.g. 30m, 2h, 1d: the first steps are timed and "
                        "max_steps is planned from it, and re-planned when the pace drifts (the "
                        "plan and the time spent kept in the checkpoint for resumes)")
    g.add_argument("--budget_replan", action=argparse.BooleanOptionalAction, default=True,
                   help="with --train_budget: move the end (wsd: the decay's start) when the measured "
                        "pace drifts, so that the run ends on time; --no-budget_replan keeps the "
                        "first plan's steps")
    g.add_argument("--extend", action="store_true",
                   help="continue a run past its planned end, to the new --max_steps or --train_budget "
                        "(the run's total, not an addition): from its last checkpoint before the decay "
                        "(--lr_schedule wsd keeps it), the decay redone at the new end, the warmup not "
                        "redone; implies --resume_from_checkpoint")
    g.add_argument("--steps_this_run", type=int, default=None,
                   help="stop after this many steps of this run (the schedule still plans max_steps)")


def check(args) -> None:

    if args.max_steps < 1:
        raise ConfigError(f"--max_steps must be >= 1, got {args.max_steps}")
    if args.steps_this_run is not None and args.steps_this_run < 1:
        raise ConfigError(f"--steps_this_run must be >= 1, got {args.steps_this_run}")
    if args.extend and args.lr_schedule != "wsd":
        raise ConfigError(f"--extend continues a run from its stable phase, which only --lr_schedule wsd has "
                          f"(not {args.lr_schedule}): train with wsd, or start a new --output_dir")
    if args.train_budget is not None:
        try:
            parse_budget(args.train_budget)
        except BudgetError as exc:
            raise ConfigError(str(exc)) from None
