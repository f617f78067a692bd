"""Training to a wall-clock budget (--train_budget 30m / 2h / 1d), Cramming's rule.

    seconds = parse_budget("2h")                             # 7200.0; BudgetError if unparseable
    step_s = time_steps(model, batches, accum, env)           # seconds per optimizer step
    max_steps = steps_for_budget(seconds, elapsed_s, step_s)

The trainer times a few optimizer steps' worth (3, or more until 1% of the budget, at most 50)
of forward + backward on real training rows
before the optimizer exists (the weights, gradients and RNG are left as they were, so the run
is the run `--max_steps N` would be), takes the slowest rank's time so that every rank fixes the
same `max_steps`, and plans the schedule for the steps that fit in what is left of the budget.
`max_steps` then goes into hparams.json and every checkpoint, so a resume continues the same
schedule whatever its speed. The optimizer step, the loader, logging and checkpoints are not in
the timed work: STEP_OVERHEAD covers them (measured: see docs/training.md).
"""
from __future__ import annotations

import itertools
import logging
import math
import re
import time

import torch

from trainer.checkpoint.layout import read_meta
from trainer.data.loader import eval_batches

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
TIMED_STEPS = 3          # optimizer steps timed at least, after one untimed (warm-up) step
TIMING_SHARE = 0.01      # ... and more until this share of the budget is spent timing
MAX_TIMED_STEPS = 50
STEP_OVERHEAD = 1.02     # a real step over a timed one (optimizer, loader, logs): 1.00-1.01 measured on CPU
END_RESERVE = 0.01       # of the budget, kept for the final checkpoint and eval


class BudgetError(ValueError):
    """--train_budget cannot be read; the message says what is accepted."""


def parse_budget(text: str) -> float:
    """'30m', '2h', '1d', '90s', '1.5h' -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise BudgetError(f"--train_budget {text!r} cannot be read: give a positive number and a "
                          "unit s, m, h or d, e.g. 30m, 2h, 1d")
    return float(m.group(1)) * UNITS[m.group(2)]


def steps_for_budget(budget_s: float, elapsed_s: float, step_s: float) -> int:
    """Optimizer steps that fit in the budget's remaining time (at least 1)."""
    left = budget_s * (1.0 - END_RESERVE) - elapsed_s
    return max(1, int(math.floor(left / (step_s * STEP_OVERHEAD))))


def time_steps(model, batches, accum: int, env, forward, budget_s: float = 0.0) -> float:
    """Seconds per optimizer step (forward + backward of `accum` micro-batches, and the gradient
    all-reduce of DDP), the maximum over ranks; the model's weights and grads and the RNG are
    left as they were. `batches` yields host batches; `forward(model, batch)` runs one."""
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    params = [p for p in model.parameters() if p.requires_grad]
    times = []
    step, spent = 0, 0.0
    while step <= TIMED_STEPS or (spent < TIMING_SHARE * budget_s and step <= MAX_TIMED_STEPS):
        env.barrier()
        t0 = time.perf_counter()
        for _ in range(accum):
            batch = {k: v.to(env.device) for k, v in next(batches).items()}
            forward(model, batch).loss.backward()
        if env.world_size > 1:   # what DDP's all-reduce moves, once a step
            flat = torch.cat([p.grad.reshape(-1) for p in params if p.grad is not None])
            env.all_reduce_sum(flat)
        if env.device.type == "cuda":
            torch.cuda.synchronize()
        if step:
            times.append(time.perf_counter() - t0)
            spent = _max_over_ranks(env, sum(times))   # the same on every rank: the same loop
        step += 1
    model.zero_grad(set_to_none=True)
    torch.set_rng_state(cpu_rng)
    if cuda_rng is not None:
        torch.cuda.set_rng_state_all(cuda_rng)
    return _max_over_ranks(env, sorted(times)[len(times) // 2])


def _max_over_ranks(env, value: float) -> float:
    if env.world_size == 1:
        return value
    import torch.distributed as dist

    t = torch.tensor([value], dtype=torch.float64, device=env.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.cpu())


def budget_max_steps(config, latest, started: float, model, train_shards, env, forward) -> int:
    """max_steps for --train_budget: the checkpoint's when resuming (the same schedule as the
    interrupted run), else from timed steps of `model` on the first rows of `train_shards`,
    batched as training batches them (see the module doc)."""

    log = logging.getLogger("trainer")
    budget = parse_budget(config.train_budget)
    if latest is not None and isinstance(read_meta(latest).get("max_steps"), int):
        max_steps = read_meta(latest)["max_steps"]
        log.info("--train_budget %s: max_steps %d from %s", config.train_budget, max_steps, latest.name)
        return max_steps
    bs, accum = config.train_batch_size, config.gradient_accumulation_steps
    # the same rows on every rank: the timing needs no share of its own
    pool = list(eval_batches(train_shards, bs, 0, 1, bs * accum * (TIMED_STEPS + 1), unpad=config.unpad))
    step_s = time_steps(model, itertools.cycle(pool), accum, env, forward, budget)
    # the ranks' clocks started apart: all take the smallest count, so their schedules agree
    max_steps = int(-_max_over_ranks(env, -steps_for_budget(budget, time.monotonic() - started, step_s)))
    log.info("--train_budget %s: %.3f s a step (timed), max_steps %d", config.train_budget, step_s,
             max_steps)
    return max_steps
