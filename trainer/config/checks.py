"""The checks of the parsed flags that need no data and no torch: each a one-line ConfigError
that says what is wrong and what to do.

    validate(args)      # parse_args (trainer/config/flags.py) calls it

Here: the data's flags read (--input_dir's languages, --phases), what is required and what
excludes what; then each component's own flags, by its `check` (trainer/config/options/).
"""
from __future__ import annotations

from trainer.config.errors import ConfigError
from trainer.config.languages import parse_alpha_schedule, parse_input_dirs
from trainer.config.options import COMPONENTS
from trainer.config.phases import check_phase_settings, parse_phases

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
    for component in COMPONENTS:   # each component's own flags (trainer/config/options/)
        component.check(args)


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
