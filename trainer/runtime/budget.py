"""Training to a wall-clock budget (--train_budget 30m / 2h / 1d), Cramming's rule.

    seconds = parse_budget("2h")                             # 7200.0; BudgetError if unparseable
    step_s = time_steps(model, batches, accum, env)           # seconds per optimizer step
    max_steps = steps_for_budget(seconds, elapsed_s, step_s)
    pacer, starts, end = plan_budget(config, phases, latest, started, model, env, forward)

The trainer times a few optimizer steps' worth (3, or more until 1% of the budget, at most 50)
of forward + backward on real training rows, after compilation has settled (untimed warm-up
steps until one compiles nothing: with --torch_compile a phase's first steps compile its
graphs, static then dynamic, and a timing that counted them, or ran before them, was off 1.6x
on an H200; a timed step that compiles is not counted either), before the optimizer exists
(the weights, gradients and RNG are left as they were, so the run is the run `--max_steps N`
would be), takes the slowest rank's time so that every rank fixes the
same `max_steps`, and plans the schedule for the steps that fit in what is left of the budget.
With sequence-length phases each phase is timed on its own rows and batch, and the steps fill
the phases' shares of the time. The plan then goes into hparams.json and every checkpoint; as
the measured pace drifts, trainer/runtime/pacing.py re-plans it (every change recorded), so
that the run ends on time. The optimizer step, the loader and logging are not in the timed
work: STEP_OVERHEAD covers them (measured: see docs/training.md); evaluations and checkpoints
are timed as they run.
"""
from __future__ import annotations

import itertools
import logging
import math
import sys
import time

import torch

from common.budget import BudgetError, parse_budget  # noqa: F401  (BudgetError: read from here too)
from trainer.checkpoint.layout import read_meta
from trainer.data.loader import eval_batches
from trainer.runtime.pacing import CHECKS, Pacer, plan_steps, reduce_max

TIMED_STEPS = 3          # optimizer steps timed at least, after the untimed warm-up steps
WARMUP_STEPS = 8         # untimed steps at most, until one compiles nothing (at least one)
TIMING_SHARE = 0.01      # ... and more until this share of the budget is spent timing
MAX_TIMED_STEPS = 50
STEP_OVERHEAD = 1.02     # a real step over a timed one (optimizer, loader, logs): 1.00-1.01 measured on CPU
END_RESERVE = 0.01       # of the budget, kept for the final checkpoint and eval


def steps_for_budget(budget_s: float, elapsed_s: float, step_s: float) -> int:
    """Optimizer steps that fit in the budget's remaining time (at least 1)."""
    left = budget_s * (1.0 - END_RESERVE) - elapsed_s
    return max(1, int(math.floor(left / (step_s * STEP_OVERHEAD))))


def compiled_frames() -> int:
    """Frames torch.compile (Dynamo) has compiled in this process so far: 0 in a run that never
    compiles (torch._dynamo is then not even imported, and is not imported here for it)."""
    utils = sys.modules.get("torch._dynamo.utils")
    return 0 if utils is None else int(utils.counters["frames"]["total"])


def time_steps(model, batches, accum: int, env, forward, budget_s: float = 0.0) -> float:
    """Seconds per optimizer step (forward + backward of `accum` micro-batches, and the gradient
    all-reduce of DDP), the maximum over ranks, timed once compilation has settled (the module
    docstring); the model's weights and grads and the RNG are left as they were. `batches`
    yields host batches; `forward(model, batch)` runs one."""
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    params = [p for p in model.parameters() if p.requires_grad]
    times, spent, warm, steps = [], 0.0, 0, 0
    while len(times) < TIMED_STEPS or (spent < TIMING_SHARE * budget_s and steps <= MAX_TIMED_STEPS):
        env.barrier()
        before = compiled_frames()
        t0 = time.perf_counter()
        for _ in range(accum):
            batch = {k: v.to(env.device) for k, v in next(batches).items()}
            forward(model, batch).loss.backward()
        if env.world_size > 1:   # what DDP's all-reduce moves, once a step
            flat = torch.cat([p.grad.reshape(-1) for p in params if p.grad is not None])
            env.all_reduce_sum(flat)
        if env.device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        steps += 1
        # every rank alike: a step that compiled on any rank is warm-up on all
        compiled = _max_over_ranks(env, float(compiled_frames() - before)) > 0
        if (warm == 0 or compiled) and warm < WARMUP_STEPS:
            warm += 1
            continue
        times.append(seconds)
        spent = _max_over_ranks(env, sum(times))   # the same on every rank: the same loop
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


def eval_estimate(step_s: float, phase, config, world_size: int) -> float:
    """Seconds of one evaluation on the phase's test shards before one is measured: a forward
    is about a third of a timed step (forward + backward), per row."""
    if not (config.eval_every and phase.shards.test):
        return 0.0
    rows = min(sum(s.num_samples for s in phase.shards.test), config.eval_max_samples)
    per_step = phase.train_batch_size * phase.gradient_accumulation_steps
    return step_s / 3.0 * math.ceil(rows / world_size) / per_step


def plan_budget(config, phases, latest, started: float, model, env, forward):
    """(pacer, starts, end) of a --train_budget run: each phase's step timed on its own first
    rows and batch size, the steps planned to fill the budget by the phases' shares of its time
    (trainer/runtime/pacing.py), re-planned later as the pace drifts. Resuming (`latest`), the
    plan and the clock come from the checkpoint (the loop loads them): nothing is timed."""
    log = logging.getLogger("trainer")
    budget = parse_budget(config.train_budget)
    shares = [p.share for p in phases]
    every = (config.eval_every, config.checkpoint_every)
    if latest is not None and isinstance(read_meta(latest).get("max_steps"), int):
        max_steps = read_meta(latest)["max_steps"]
        log.info("--train_budget %s: the plan and the time spent from %s (max_steps %d then)",
                 config.train_budget, latest.name, max_steps)
        pacer = Pacer(budget, started, [1.0] * len(phases), [0.0] * len(phases), shares, every, 0.0,
                      max(1, max_steps // CHECKS), END_RESERVE, replan=False)   # until loaded
        return pacer, None, max_steps
    timed, evals = [], []
    for phase in phases:
        bs, accum = phase.train_batch_size, phase.gradient_accumulation_steps
        # the same rows on every rank: the timing needs no share of its own
        pool = list(eval_batches(phase.shards.train, bs, 0, 1, bs * accum * (TIMED_STEPS + 1),
                                 unpad=config.unpadded_rows,
                                 within=config.doc_attention == "within"))
        step_s = time_steps(model, itertools.cycle(pool), accum, env, forward, budget * phase.share)
        timed.append(step_s * STEP_OVERHEAD)
        evals.append(eval_estimate(step_s, phase, config, env.world_size))
    # the ranks' clocks started apart: the latest start's, so that every rank plans alike
    elapsed = reduce_max(env, [time.monotonic() - started])[0]
    pacer = Pacer(budget, started, timed, evals, shares, every, elapsed, 1, END_RESERVE,
                  replan=config.budget_replan)
    starts, end = plan_steps(0, 0, [0], elapsed, pacer.paces(None, 0), shares, elapsed, pacer.end_s())
    pacer.check_every = max(1, end // CHECKS)
    paces = ", ".join(f"{t:.3f}" for t in timed)
    log.info("--train_budget %s: %s s a step (timed%s), max_steps %d%s", config.train_budget, paces,
             ", by phase" if len(phases) > 1 else "", end,
             f", phases from steps {', '.join(map(str, starts))}" if len(phases) > 1 else "")
    return pacer, starts, end
