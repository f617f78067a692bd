"""The device's and the process group's flags: the device and precision, and DeepSpeed
(trainer/runtime/distributed.py, ds_settings.py)."""
from __future__ import annotations

import argparse

from trainer.config.errors import ConfigError


def add_flags(parser) -> None:
    g = parser.add_argument_group("device, precision and distributed")
    g.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: cuda when present")
    g.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default=None,
                   help="default: bf16 on CUDA, fp32 on CPU")
    g.add_argument("--deepspeed", action="store_true", help="wrap the model with deepspeed.initialize")
    g.add_argument("--deepspeed_config", help="DeepSpeed JSON, e.g. trainer/configs/ds_zero1.json")
    g.add_argument("--local_rank", "--local-rank", type=int, default=None,
                   help=argparse.SUPPRESS)  # passed by the deepspeed launcher; LOCAL_RANK env wins


def check(args) -> None:
    if args.deepspeed and not args.deepspeed_config:
        raise ConfigError("--deepspeed needs --deepspeed_config (e.g. trainer/configs/ds_zero1.json)")
