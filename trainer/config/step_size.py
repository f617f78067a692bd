"""A step sized in tokens (--tokens_per_step N): the same tokens every optimizer step in every
sequence-length phase, each phase's rows a rank split into a micro-batch and gradient
accumulation. No torch, no data: the trainer (trainer/start/parts.py) and `make pretrain --dry-run`
(recipes/pretrain_plan.py) both size steps with it.

    sizes = size_steps(524288, [128, 1024, 8192], world_size=1, caps=[512, 64, 8])
    sizes[0].micro, sizes[0].accum, sizes[0].rows      # 512 rows x 8 micro-steps = 4,096 rows
    sizes[0].line(1, 128, 1)                            # the log line of phase 1

N counts the tokens of a step over all ranks (padding included: a row is its seq_len). A phase
of rows of L tokens on W ranks trains N / (L x W) rows a rank a step: N must be a multiple of
L x W for every phase (else one ConfigError that names the multiples that would do), and at
least one row a rank. The micro-batch is the largest divisor of those rows that is at most the
phase's cap (its --train_batch_size, or on CUDA the card's rows: trainer/runtime/card.py), and
gradient accumulation makes up the rest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from common.numbers import plural
from trainer.config.errors import ConfigError


@dataclass(frozen=True)
class StepSize:
    rows: int        # rows a rank a step
    micro: int       # rows a rank a micro-step (train_batch_size)
    accum: int       # micro-steps a step (gradient_accumulation_steps)

    def line(self, phase: int, seq_len: int, world_size: int, phases: int = 1) -> str:
        """One log line: the micro-batch, the accumulation and the tokens of a step."""
        which = f"phase {phase} of {phases}" if phases > 1 else "the run"
        ranks = f" x {world_size} ranks" if world_size > 1 else ""
        return (f"step size, {which} ({seq_len:,}-token rows): micro-batch {self.micro} rows x "
                f"{self.accum} accumulation{ranks} = {self.rows * seq_len * world_size:,} tokens a step")


def row_unit(seq_lens, world_size: int) -> int:
    """The tokens a step must be a multiple of: one row a rank of every phase (their lcm)."""
    return math.lcm(*seq_lens) * world_size


def largest_divisor(n: int, cap: int) -> int:
    """The largest divisor of n that is at most cap (>= 1)."""
    return max(d for d in range(1, min(n, max(1, cap)) + 1) if n % d == 0)


def size_steps(tokens_per_step: int, seq_lens, world_size: int, caps) -> list[StepSize]:
    """Each phase's StepSize for N = `tokens_per_step`; see the module docstring."""
    n, unit = tokens_per_step, row_unit(seq_lens, world_size)
    ranks = plural(world_size, "rank")
    lengths = " / ".join(f"{s:,}" for s in seq_lens)
    if n < unit:
        raise ConfigError(f"--tokens_per_step {n:,} is less than one row a rank of {lengths} tokens on "
                          f"{ranks}: give at least {unit:,} (or a multiple of it)")
    if n % unit:
        low, high = n // unit * unit, (n // unit + 1) * unit
        raise ConfigError(f"--tokens_per_step {n:,} is not a multiple of a row a rank ({lengths}-token "
                          f"rows on {ranks}: {unit:,} tokens): give {low:,} or {high:,}")
    sizes = []
    for seq_len, cap in zip(seq_lens, caps):
        rows = n // (seq_len * world_size)
        micro = largest_divisor(rows, cap)
        sizes.append(StepSize(rows, micro, rows // micro))
    return sizes
