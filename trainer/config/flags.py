"""The trainer's flags, and the JSON config file that gives the same keys (command line wins).

    args = parse_args(["--config_file", "trainer/configs/phase1_base.json", "--input_dir", "D",
                       "--output_dir", "O"])   # checked (trainer/config/checks.py); no torch
    args.explicit   # the keys set on the command line or in the config file (not defaults)

The flags are declared by the components that use them (trainer/config/options/, one argparse
group each). The namespace is what the user said; trainer/config/resolved.py turns it into the run's frozen
TrainConfig with every default resolved.

Flag names follow NVIDIA's and gpauloski's run_pretraining.py (underscores). A relative
`model_config` / `deepspeed_config` / `vocab_file` / `init_from` in a config file is looked up beside that
file first (so shipped configs work from any directory), then in the working directory.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from common.flags import close_flag
from trainer.config.checks import validate
from trainer.config.errors import ConfigError, read_json
from trainer.config.languages import normalise_alpha
from trainer.config.options import COMPONENTS
from trainer.config.phases import parse_phases

PATH_KEYS = ("model_config", "deepspeed_config", "vocab_file", "init_from", "phases")
# the old names of flags (and config-file keys), still taken: --bert_config is --model_config
ALIASES = {"bert_config": "model_config"}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of argparse's usage dump + exit 2
        raise ConfigError(f"{message}{close_flag(self, message)} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    """The parser: --config_file and --seed (the whole run's), then each component's group of
    flags (trainer/config/options/: model, data, masking, optimizer, budget, ...)."""
    p = _Parser(prog="run_pretraining.py", description="BERT pretraining on HDF5 shards.",
                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--config_file", help="JSON file with any of these keys (underscore names); flags win")
    p.add_argument("--seed", type=int, default=42,
                   help="seed of the initial weights, the data order and dropout")
    for component in COMPONENTS:
        component.add_flags(p)
    return p


def _read_config_file(path: str) -> dict:
    cfg = read_json(path, "--config_file")
    if not isinstance(cfg, dict):
        raise ConfigError(f"--config_file {path}: expected a JSON object of flag names")
    return cfg


def _check_types(parser, cfg: dict, source: str) -> dict:
    actions = {a.dest: a for a in parser._actions}
    out = {}
    for key, value in cfg.items():
        if key.startswith("_"):  # comments
            continue
        action = actions.get(key)
        if key in ALIASES:   # an old name
            key = ALIASES[key]
            action = actions.get(key)
        if action is None or key in ("config_file", "help", "local_rank"):
            keys = [k for k in actions if k not in ("config_file", "help", "local_rank")]
            close = difflib.get_close_matches(key, keys, n=1, cutoff=0.75)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{source}: unknown key {key!r}; {hint}keys are the flag names without "
                              "dashes (see --help)")
        if key == "input_dir":   # a folder, ["LANG=DIR", ...] or {"LANG": DIR}: checked by validate
            ok = isinstance(value, (str, list, dict))
        elif key == "phases":    # the list, or a file that holds it: checked by validate
            ok = isinstance(value, (str, list))
        elif key == "sampling_alpha":   # 0.3 or "0.7,0.5,0.3"
            value = normalise_alpha(value)
            ok = True
        elif isinstance(action, (argparse._StoreTrueAction, argparse.BooleanOptionalAction)):
            ok = isinstance(value, bool)
        elif action.type is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif action.type is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = value is None or isinstance(value, str)
        if not ok or (action.choices and value not in action.choices):
            raise ConfigError(f"{source}: key {key!r} has a bad value {value!r}"
                              + (f" (one of {', '.join(action.choices)})" if action.choices else ""))
        out[key] = value
    return out


def _resolve_relative(cfg: dict, base: Path, source: str) -> dict:
    for key in PATH_KEYS:
        value = cfg.get(key)
        if isinstance(value, str) and not os.path.isabs(value) and (base / value).exists():
            cfg[key] = str(base / value)
    if isinstance(cfg.get("phases"), list):   # each phase's folder beside the file first
        cfg["phases"] = parse_phases(cfg["phases"], source=source, base=base)
    return cfg


def parse_args(argv=None) -> argparse.Namespace:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    first = parser.parse_args(argv)
    explicit = {a.dest for a in parser._actions if a.dest != "help"
                and getattr(first, a.dest) != a.default}
    if first.config_file:
        cfg = _check_types(parser, _read_config_file(first.config_file), first.config_file)
        cfg = _resolve_relative(cfg, Path(first.config_file).resolve().parent,
                                f"--config_file {first.config_file}")
        parser.set_defaults(**cfg)
        explicit |= set(cfg)
    args = parser.parse_args(argv)
    if hasattr(args, "_input_dir_given"):
        del args._input_dir_given
    # a flag repeated with its default value on the command line is explicit too
    explicit |= {a.dest for a in parser._actions
                 if any(x == s or x.startswith(s + "=") for x in argv for s in a.option_strings)}
    args.explicit = sorted(explicit)
    validate(args)
    return args
