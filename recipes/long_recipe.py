"""`make pretrain ... PRETRAIN_OPTS=--long`: the long-context recipe's sequence-length phases
(recipes/pretrain.py; docs/training.md: Long context in one command).

    for phase in LONG["cpu"]: phase.max_seq, phase.max_pred     # what to encode
    write_phases(run_dir / "phases.json", LONG["cpu"], folders, batch_size=32)

Most steps on short rows, then longer, ending on long rows with the global RoPE θ raised for them
(ModernBERT's 10k -> 160k; the local layers keep 10k), under the one warmup-stable-decay schedule
and --train_budget (the shares are of the time): on CPU 128 -> 512 -> 2,048 tokens (shares 0.7 /
0.2 / 0.1, the phases bench_long_context.py measures at an equal budget), on GPUs 128 -> 1,024 ->
8,192 (0.6 / 0.25 / 0.15, trainer/configs/phases_long.json's shape). The batch a rank shrinks as
the rows grow, so that a step holds about the same tokens in every phase (32 x 128 = 8 x 512 =
2 x 2,048 on CPU). On a GPU the step is sized in tokens instead (recipes/pretrain_plan.py), each
phase's micro-batch the card's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LongPhase:
    max_seq: int
    max_pred: int           # 30% of the row, as the 128-token rows' 40
    share: float
    batch_divisor: int      # its batch a rank: --batch-size / this (at least 1)
    global_rope_theta: float


LONG = {
    "cpu": (LongPhase(128, 40, 0.7, 1, 10_000.0), LongPhase(512, 160, 0.2, 4, 10_000.0),
            LongPhase(2048, 640, 0.1, 16, 160_000.0)),
    "cuda": (LongPhase(128, 40, 0.6, 1, 10_000.0), LongPhase(1024, 320, 0.25, 8, 10_000.0),
             LongPhase(8192, 2560, 0.15, 64, 160_000.0)),
}
LOCAL_ROPE_THETA = 10_000.0
# --long on a CPU, measured (bench/README.md, "make pretrain --long on a CPU"; uk, 2 gloo ranks):
# the held-out accuracy against the unigram baseline was 1.1x at 5m, 2.0x at 10m, 2.5x at 20m,
# and the context gain at noise level in all three (-0.0002, -0.0013, -0.0006). Below this budget
# the model is still near word frequencies when the long rows begin: make pretrain warns.
CPU_MIN_BUDGET = "20m"
CPU_MEASURED = "1.1x the unigram baseline at 5m, 2.0x at 10m, 2.5x at 20m"


def phase_list(phases, folders: list[Path], batch_size: int | None) -> list[dict]:
    """The --phases list of the recipe, each phase on its encode folder; without `batch_size`
    (a GPU's step in tokens) each phase's micro-batch is the card's."""
    return [{"input_dir": str(folder), "share": p.share,
             **({"train_batch_size": max(1, batch_size // p.batch_divisor)} if batch_size else {}),
             "global_rope_theta": p.global_rope_theta, "local_rope_theta": LOCAL_ROPE_THETA}
            for p, folder in zip(phases, folders)]


def write_phases(path: Path, phases, folders: list[Path], batch_size: int | None) -> Path:
    path.write_text(json.dumps(phase_list(phases, folders, batch_size), indent=1) + "\n", encoding="utf-8")
    return path
