"""The speed flags: their defaults are resolved per device, precision and family
(trainer/runtime/speed.py)."""
from __future__ import annotations

import argparse


def add_flags(parser) -> None:
    g = parser.add_argument_group("speed (default: on for CUDA in bf16 without DeepSpeed, where "
                                  "measured faster; off elsewhere: trainer/runtime/speed.py)")
    g.add_argument("--torch_compile", action=argparse.BooleanOptionalAction, default=None,
                   help="torch.compile each encoder layer (the first steps pay the compile)")
    g.add_argument("--unpad", action=argparse.BooleanOptionalAction, default=None,
                   help="drop the padding tokens before the encoder and restore them after "
                        "(flash varlen attention on CUDA)")


def check(args) -> None:
    """Nothing to check: any of the two is taken (their defaults: trainer/runtime/speed.py)."""
