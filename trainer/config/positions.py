"""Longer rows for a model that exists: `--max_position_embeddings N` beside `--init_from` extends
a learned position table (BERT, RoBERTa/XLM-R, DistilBERT) by copying its rows, and
`--global_rope_theta` / `--local_rope_theta` (ModernBERT) or `--rope_theta` (a BERT-style RoPE
family) set RoPE θ, as a phase's keys do (docs/training.md: Longer rows for a model that exists).
The flags are read and checked here, without data or torch; trainer/start/longer_rows.py applies them
to the model config, the family (trainer/models/family.py) copies the rows.

    add_position_flags(group)        # flags.py: the four flags
    check_position_flags(args)       # checks.validate: values; N only beside --init_from
    flag_thetas(config)              # {"global_rope_theta": 160000.0} of the flags given
"""
from __future__ import annotations

import math

from trainer.config.errors import ConfigError

THETA_FLAGS = ("rope_theta", "global_rope_theta", "local_rope_theta")


def add_position_flags(group) -> None:
    group.add_argument("--max_position_embeddings", type=int, default=None, metavar="N",
                       help="beside --init_from: extend the model's learned position table (BERT, "
                            "RoBERTa/XLM-R, DistilBERT) to rows of N tokens by copying its learned "
                            "rows in order (Longformer's recipe); RoPE families need none")
    group.add_argument("--global_rope_theta", type=float, default=None,
                       help="ModernBERT: the global layers' RoPE θ (e.g. 160000 for long rows); "
                            "default: the model config's")
    group.add_argument("--local_rope_theta", type=float, default=None,
                       help="ModernBERT: the sliding-window layers' RoPE θ; default: the model config's")
    group.add_argument("--rope_theta", type=float, default=None,
                       help="a BERT-style RoPE family's θ; default: the model config's")


def flag_thetas(config) -> dict[str, float]:
    """The θ the flags (or a config file's keys) set, by name."""
    return {k: float(getattr(config, k)) for k in THETA_FLAGS if getattr(config, k, None) is not None}


def check_position_flags(args) -> None:
    """The flags' values; --max_position_embeddings only beside --init_from (the model config of a
    run from scratch says its positions)."""
    n = getattr(args, "max_position_embeddings", None)
    if n is not None:
        if n < 1:
            raise ConfigError(f"--max_position_embeddings must be >= 1, got {n}")
        if not getattr(args, "init_from", None):
            raise ConfigError(f"--max_position_embeddings {n} extends the position table of a model "
                              "that exists: give it beside --init_from; a model from scratch takes its "
                              "positions from its model config (max_position_embeddings in --model_config)")
    for key in THETA_FLAGS:
        value = getattr(args, key, None)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ConfigError(f"--{key} must be a number > 0, got {value}")
