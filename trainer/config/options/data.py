"""The data's flags: the HDF5 folders (one, one per language, or one per sequence-length phase),
the languages' sampling, and the rows of a step (per rank and micro-step, or a step in tokens)."""
from __future__ import annotations

import argparse

from trainer.config.errors import ConfigError


class Repeated(argparse.Action):
    """A repeatable flag (--input_dir LANG=DIR ...): the command line's values replace a config
    file's instead of adding to them."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = f"_{self.dest}_given"
        items = list(getattr(namespace, self.dest)) if getattr(namespace, given, False) else []
        setattr(namespace, given, True)
        setattr(namespace, self.dest, items + [values])


def add_flags(parser) -> None:
    g = parser.add_argument_group("data and batches")
    g.add_argument("--input_dir", action=Repeated, metavar="[LANG=]DIR",
                   help="folder of HDF5 shards, searched recursively: *training* files train, *test* "
                   "files evaluate. Several languages: LANG=DIR once per language (docs/training.md: "
                   "Several languages)")
    g.add_argument("--sampling_alpha", default="0.3",
                   help="with several languages: a language's share of the samples is proportional "
                   "to (its share of the training samples) ** alpha (1: as the data, 0: uniform); a "
                   "schedule: 0.7,0.5,0.3 (equal parts of max_steps) or 0.7@0,0.5@0.4,0.3@0.8 "
                   "(from a share of max_steps on)")
    g.add_argument("--phases", metavar="FILE",
                   help="sequence-length phases in one run: a JSON list of phases, each with input_dir "
                   "and share (of the steps or of --train_budget) and optionally seq_len, "
                   "train_batch_size, mlm_probability, learning_rate, global_rope_theta / "
                   "local_rope_theta (ModernBERT) or rope_theta; replaces --input_dir "
                   "(docs/training.md: Phases)")
    g.add_argument("--train_batch_size", type=int, default=32, help="per rank, per micro-step")
    g.add_argument("--gradient_accumulation_steps", type=int, default=1,
                   help="micro-steps per optimizer step (gradients all-reduced on the last only)")
    g.add_argument("--tokens_per_step", type=int, default=None,
                   help="size each optimizer step in tokens (over all ranks, the same in every phase): "
                   "each phase's rows a rank from it and its seq_len, the micro-batch at most "
                   "--train_batch_size (on CUDA, when that is not given: the largest the card takes, "
                   "trainer/runtime/card.py), gradient accumulation making up the rest "
                   "(docs/training.md: A step in tokens)")


def check(args) -> None:
    for key in ("train_batch_size", "gradient_accumulation_steps"):
        if getattr(args, key) < 1:
            raise ConfigError(f"--{key} must be >= 1, got {getattr(args, key)}")
    n = args.tokens_per_step   # it decides each phase's accumulation (trainer/config/step_size.py)
    if n is None:
        return
    if n < 1:
        raise ConfigError(f"--tokens_per_step must be >= 1, got {n}")
    if "gradient_accumulation_steps" in getattr(args, "explicit", ()):
        raise ConfigError("--tokens_per_step sets each phase's gradient accumulation: leave out "
                          f"--gradient_accumulation_steps {args.gradient_accumulation_steps}")
    if args.deepspeed:
        raise ConfigError("--tokens_per_step sizes steps per phase, but under --deepspeed its config "
                          "fixes the batch: give train_batch_size there, or leave out --deepspeed")
