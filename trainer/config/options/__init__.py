"""The trainer's flags, each declared and checked by the component that uses them.

    for component in COMPONENTS:   # model, data, masking, optimizer, budget, checkpoint, speed,
        component.add_flags(parser)   # distributed, logs: one argparse group of its flags each
        component.check(args)         # their values: one ConfigError line (trainer/config/checks.py)

A new flag goes in its component's module here, with its check (and TrainConfig's field of the
same name, trainer/config/resolved.py); the parser, the config file's keys and --help follow from
it. The rules between components (what is required, what excludes what) are checks.py's.
All torch-free: --help and flag errors stay instant.
"""
from __future__ import annotations

from trainer.config.options import (
    budget,
    checkpoint,
    data,
    distributed,
    logs,
    masking,
    model,
    optimizer,
    speed,
)

COMPONENTS = (model, data, masking, optimizer, budget, checkpoint, speed, distributed, logs)

__all__ = ["COMPONENTS"]
