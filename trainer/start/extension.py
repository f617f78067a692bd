"""--extend: a run continued past its planned end to a larger total, from its stable phase.

    check_budget(config, pacer, ckpt)       # a plain resume keeps its budget: one TrainError line
    line, record = extend_plan(config, plan, pacer, step)   # the plan to the new total
    set_lr_now(optimizer, scheduler, plan, step)            # the next step's lr from that plan

A warmup-stable-decay run keeps its last checkpoint before the decay (trainer/loop.py marks it
"stable"; the rotation keeps it). `--extend` resumes from it (trainer/runtime/output_dir.py picks
it) and moves the end to the new --max_steps, or to what fills the new --train_budget, which is
the run's total: the time spent up to the checkpoint counts in it. The warmup is not redone, the
stable lr goes on, the decay is the last --decay_proportion of the new end
(trainer/schedule/optim.py LrShape.extend); the old decay's checkpoints are removed by the loop,
so that a later resume cannot go back to them. The steps up to the checkpoint are the old run's,
exactly (its train_log.jsonl records after it are truncated).
"""
from __future__ import annotations

from common.budget import parse_budget
from trainer.errors import TrainError

BUDGET_SAME = 0.005   # budgets closer than this share are the same budget (a resume's, not an extension's)


def check_budget(config, pacer, ckpt) -> None:
    """A resume without --extend continues the checkpoint's budget: another --train_budget is one
    line that says what to do, not a budget silently ignored."""
    asked = parse_budget(config.train_budget)
    if not config.extend and abs(asked - pacer.budget_s) > BUDGET_SAME * pacer.budget_s:
        raise TrainError(f"{ckpt.name} belongs to a run planned for --train_budget {pacer.budget_s:.0f} s, "
                         f"not {config.train_budget} ({asked:.0f} s): resume it with the same budget, or add "
                         "--extend to continue it to a longer total")


def extend_plan(config, plan, pacer, step: int) -> tuple[str, dict] | None:
    """(the log line, the train_log.jsonl record) of the plan continued from step `step` to the new
    --max_steps, or with a pacer to the steps that fill the new --train_budget; None where the
    checkpoint is already planned for that total (an extension interrupted and started again)."""
    k, before = plan.phase_at(step), plan.end
    if pacer is not None:
        budget, old_budget = parse_budget(config.train_budget), pacer.budget_s
        if abs(budget - old_budget) <= BUDGET_SAME * old_budget:
            return None
        if budget < old_budget:
            raise TrainError(f"--extend: the run was planned for --train_budget {old_budget:.0f} s; "
                             f"{config.train_budget} ({budget:.0f} s) is less: give the total you want, more than that")
        # the pace the run measured last in this phase (its re-plans'), not the first timing's
        paces = [r["pace_s"] for r in plan.replans if "pace_s" in r and r["step"] > plan.starts[k]]
        starts, end = pacer.extend(budget, step, k, plan.starts[:k + 1], paces[-1] if paces else None)
        spent = {"budget_s": budget, "budget_before_s": old_budget, "budget_elapsed_s": round(pacer.elapsed(), 3)}
    elif config.max_steps == before:
        return None
    else:
        starts, end, spent = None, config.max_steps, {}
    line = plan.extend(step, end, starts)
    return line, {"extended_from_step": step, "planned_end": before, "end": plan.end, **spent}


def set_lr_now(optimizer, scheduler, plan, step: int) -> None:
    """The optimizer's lr for the next step from the (changed) plan: LambdaLR sets it only as it
    steps, so a plan changed between steps would otherwise act one step late."""
    if not hasattr(scheduler, "base_lrs"):   # a DeepSpeed config's own scheduler
        return
    factor = plan.lr_factor(step)
    for group, base in zip(optimizer.param_groups, scheduler.base_lrs):
        group["lr"] = base * factor
    scheduler._last_lr = [group["lr"] for group in optimizer.param_groups]
