"""The checks of the parsed flags that need no data and no torch: each a one-line ConfigError
that says what is wrong and what to do.

    validate(args)      # parse_args (trainer/config/flags.py) calls it
"""
from __future__ import annotations

from trainer.config.errors import ConfigError
from trainer.config.languages import parse_alpha_schedule, parse_input_dirs
from trainer.config.phases import check_phase_settings, parse_phases
from trainer.config.positions import check_position_flags

REQUIRED = ("output_dir",)


def validate(args) -> None:
    src = " (on the command line or as \"{}\" in --config_file)"
    _validate_languages(args)
    _validate_phases(args)
    if not args.input_dir and not args.phases:
        raise ConfigError("--input_dir is required" + src.format("input_dir")
                          + ", or --phases (a list of phases, each with its input_dir)")
    for key in REQUIRED:
        if not getattr(args, key):
            raise ConfigError(f"--{key} is required" + src.format(key))
    init_from = getattr(args, "init_from", None)
    if not args.model_config and not init_from:
        raise ConfigError("--model_config (or its old name --bert_config) is required, unless --init_from "
                          "gives the model" + src.format("model_config"))
    if init_from and args.model_config:
        raise ConfigError(f"--init_from {init_from} gives the model's architecture: leave out "
                          f"--model_config {args.model_config}")
    if init_from and (args.phase2 or args.init_checkpoint):
        raise ConfigError("--init_from and --phase2/--init_checkpoint both name the starting weights: "
                          "give one (--init_from also takes a phase-1 run)")
    for key in ("train_batch_size", "gradient_accumulation_steps", "max_steps", "log_every",
                "checkpoint_every", "keep_checkpoints", "eval_max_samples"):
        if getattr(args, key) < 1:
            raise ConfigError(f"--{key} must be >= 1, got {getattr(args, key)}")
    for key in ("steps_this_run", "eval_batch_size"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            raise ConfigError(f"--{key} must be >= 1, got {getattr(args, key)}")
    if args.eval_every < 0:
        raise ConfigError(f"--eval_every must be >= 0, got {args.eval_every}")
    if not 0.0 <= args.warmup_proportion < 1.0:
        raise ConfigError(f"--warmup_proportion must be in [0, 1), got {args.warmup_proportion}")
    if args.learning_rate <= 0:
        raise ConfigError(f"--learning_rate must be > 0, got {args.learning_rate}")
    if args.phase2 and not args.init_checkpoint:
        raise ConfigError("--phase2 needs --init_checkpoint (the phase-1 output_dir or checkpoint)")
    _validate_masking(args)
    _validate_recipe(args)
    check_position_flags(args)
    _validate_tokens_per_step(args)
    if args.deepspeed and not args.deepspeed_config:
        raise ConfigError("--deepspeed needs --deepspeed_config (e.g. trainer/configs/ds_zero1.json)")


def _validate_languages(args) -> None:
    """--input_dir as one folder or {code: folder}; the --sampling_alpha schedule."""
    args.input_dir = parse_input_dirs(args.input_dir)
    parse_alpha_schedule(args.sampling_alpha)
    if isinstance(args.input_dir, str) and "sampling_alpha" in getattr(args, "explicit", ()):
        raise ConfigError(f"--sampling_alpha applies to several languages (--input_dir LANG=DIR, "
                          f"once per language); --input_dir {args.input_dir} is one folder")


def _validate_phases(args) -> None:
    """--phases read (a file or a config file's list) and checked; it replaces --input_dir."""
    args.phases = parse_phases(getattr(args, "phases", None))
    if args.phases is None:
        return
    if args.input_dir:
        raise ConfigError(f"--input_dir {args.input_dir} and --phases both name the training data: "
                          "leave out --input_dir (each phase gives its own input_dir)")
    check_phase_settings(args.phases, args.masking, args.deepspeed)


DYNAMIC_ONLY = ("mlm_probability", "whole_word_masking", "mask_replace_prob", "random_replace_prob")


def _validate_masking(args) -> None:
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


def _validate_recipe(args) -> None:
    """The budget and the schedule (the model family's objective: trainer/config/resolved.py)."""
    from trainer.runtime.budget import BudgetError, parse_budget  # torch: the flags' checks stay torch-free

    if args.train_budget is not None:
        try:
            parse_budget(args.train_budget)
        except BudgetError as exc:
            raise ConfigError(str(exc)) from None
    if not 0.0 < args.decay_proportion <= 1.0:
        raise ConfigError(f"--decay_proportion must be in (0, 1], got {args.decay_proportion}")
    if args.lr_schedule == "wsd" and args.warmup_proportion + args.decay_proportion > 1.0:
        raise ConfigError(f"--warmup_proportion {args.warmup_proportion} + --decay_proportion "
                          f"{args.decay_proportion} is more than 1")


def _validate_tokens_per_step(args) -> None:
    """--tokens_per_step decides each phase's accumulation (trainer/config/step_size.py)."""
    n = args.tokens_per_step
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
