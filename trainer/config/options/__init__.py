"""The trainer's flags, each declared by the component that uses them, in its own help group.

    for add in COMPONENTS:       # model, data, masking, optimizer, budget, checkpoint, speed,
        add(parser)              # distributed, logs: each one argparse group of its flags

A new flag goes in its component's module here (and TrainConfig's field of the same name,
trainer/config/resolved.py); the parser, the config file's keys and --help follow from it.
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

COMPONENTS = (model.add_flags, data.add_flags, masking.add_flags, optimizer.add_flags,
              budget.add_flags, checkpoint.add_flags, speed.add_flags, distributed.add_flags,
              logs.add_flags)

__all__ = ["COMPONENTS"]
