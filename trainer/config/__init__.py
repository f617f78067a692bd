"""The trainer's configuration: the flags and the JSON config file (flags.py), their checks
(checks.py), and the frozen TrainConfig every default is resolved into once (resolved.py).

    config = load_config(argv)      # parse_args + resolve_config
"""
from trainer.config.checks import ConfigError
from trainer.config.flags import build_parser, parse_args
from trainer.config.resolved import TrainConfig, resolve_config


def load_config(argv=None) -> TrainConfig:
    """The run's TrainConfig from its command line (and --config_file)."""
    return resolve_config(parse_args(argv))


__all__ = ["ConfigError", "TrainConfig", "build_parser", "load_config", "parse_args", "resolve_config"]
