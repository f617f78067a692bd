"""The objective's flags: static or dynamic masks and their rates, attention across or within the
documents of packed rows, and the next-sentence loss."""
from __future__ import annotations

from trainer.config.errors import ConfigError


def add_flags(parser) -> None:
    g = parser.add_argument_group("objective and masking (docs/training.md: Masking)")
    g.add_argument("--masking", choices=("static", "dynamic"), default="static",
                   help="static: the masks in the HDF5 (NVIDIA's recipe); dynamic: new masks every "
                        "epoch from (seed, epoch, sample), the originals restored from the HDF5")
    g.add_argument("--mlm_probability", type=float, default=0.15,
                   help="share of the tokens masked (with --masking dynamic), at most the HDF5's "
                        "max_pred per row; by default the rate --input_dir was encoded with (its "
                        "encode's --masked-lm-prob, said in one log line), else 0.15")
    g.add_argument("--whole_word_masking", action="store_true",
                   help="mask a piece and the ## pieces after it together (with --masking dynamic)")
    g.add_argument("--mask_replace_prob", type=float, default=0.8,
                   help="share of the masked tokens replaced by [MASK] (with --masking dynamic)")
    g.add_argument("--random_replace_prob", type=float, default=0.1,
                   help="share of the masked tokens replaced by a random piece; the rest stay "
                        "(with --masking dynamic)")
    g.add_argument("--doc_attention", choices=("within", "across"), default=None,
                   help="packed rows: attention within each document (the default where the files "
                        "mark where documents start, `encode --pack`'s doc_starts) or across the "
                        "whole row (the default for files without the marks, and rows of sentence "
                        "pairs; docs/training.md: Long context)")
    g.add_argument("--no_nsp", action="store_true",
                   help="masked LM only (RoBERTa): no next-sentence loss, the NSP head stays as "
                        "initialised")


DYNAMIC_ONLY = ("mlm_probability", "whole_word_masking", "mask_replace_prob", "random_replace_prob")


def check(args) -> None:
    if args.masking == "static":
        given = [k for k in DYNAMIC_ONLY if k in getattr(args, "explicit", ())]
        if given:
            raise ConfigError(f"--{given[0]} applies to --masking dynamic; the static masks come from "
                              "`pipeline encode` (its --masked-lm-prob, --whole-word-masking)")
    if not 0.0 < args.mlm_probability < 1.0:
        raise ConfigError(f"--mlm_probability must be in (0, 1), got {args.mlm_probability}")
    for key in ("mask_replace_prob", "random_replace_prob"):
        if not 0.0 <= getattr(args, key) <= 1.0:
            raise ConfigError(f"--{key} must be in [0, 1], got {getattr(args, key)}")
    if args.mask_replace_prob + args.random_replace_prob > 1.0 + 1e-9:
        raise ConfigError(f"--mask_replace_prob {args.mask_replace_prob} + --random_replace_prob "
                          f"{args.random_replace_prob} is more than 1")
