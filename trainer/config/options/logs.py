"""The flags of what a run logs and evaluates as it goes (trainer/runtime/logs.py,
trainer/evaluation/heldout.py)."""
from __future__ import annotations

import argparse

from trainer.config.errors import ConfigError


def add_flags(parser) -> None:
    g = parser.add_argument_group("logs and evaluation")
    g.add_argument("--log_every", type=int, default=10,
                   help="log the mean training loss every N steps and at the last one")
    g.add_argument("--eval_every", type=int, default=0,
                   help="evaluate every N steps and at the last one (0: no evaluation)")
    g.add_argument("--eval_batch_size", type=int, default=None, help="default: train_batch_size")
    g.add_argument("--eval_max_samples", type=int, default=10000,
                   help="evaluate on the first N held-out samples")
    g.add_argument("--tensorboard", action=argparse.BooleanOptionalAction, default=True,
                   help="also write TensorBoard event files (output_dir/tensorboard)")


def check(args) -> None:
    for key in ("log_every", "eval_max_samples"):
        if getattr(args, key) < 1:
            raise ConfigError(f"--{key} must be >= 1, got {getattr(args, key)}")
    if args.eval_batch_size is not None and args.eval_batch_size < 1:
        raise ConfigError(f"--eval_batch_size must be >= 1, got {args.eval_batch_size}")
    if args.eval_every < 0:
        raise ConfigError(f"--eval_every must be >= 0, got {args.eval_every}")
