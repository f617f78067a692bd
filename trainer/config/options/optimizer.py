"""The optimizer's and the learning-rate schedule's flags, and the one list of schedules (the
flag's choices; trainer/schedule/optim.py's shapes read the degree of each one's decay here)."""
from __future__ import annotations

from trainer.config.errors import ConfigError

# the schedules after the warmup, each with the degree of its decay (wsd: of its final decay)
SCHEDULES = {"poly": 0.5, "linear": 1.0, "wsd": 1.0}
OPTIMIZERS = ("lamb", "adamw")


def add_flags(parser) -> None:
    g = parser.add_argument_group("optimizer and schedule")
    g.add_argument("--optimizer", choices=OPTIMIZERS, default="lamb",
                   help="LAMB (NVIDIA's recipe, large batches) or AdamW")
    g.add_argument("--learning_rate", type=float, default=6e-3, help="peak learning rate")
    g.add_argument("--warmup_proportion", type=float, default=0.01,
                   help="share of max_steps of linear warmup, then polynomial decay to 0")
    g.add_argument("--lr_schedule", choices=tuple(SCHEDULES), default="poly",
                   help="after the warmup: poly (NVIDIA's, degree 0.5), linear to 0, or wsd "
                        "(stable at the peak, then linear to 0 over the last --decay_proportion)")
    g.add_argument("--decay_proportion", type=float, default=0.2,
                   help="share of max_steps of the final decay of --lr_schedule wsd")
    g.add_argument("--weight_decay", type=float, default=0.01,
                   help="decoupled weight decay (not on biases and LayerNorm)")
    g.add_argument("--max_grad_norm", type=float, default=1.0, help="0 disables clipping")


def check(args) -> None:
    if not 0.0 <= args.warmup_proportion < 1.0:
        raise ConfigError(f"--warmup_proportion must be in [0, 1), got {args.warmup_proportion}")
    if args.learning_rate <= 0:
        raise ConfigError(f"--learning_rate must be > 0, got {args.learning_rate}")
    if not 0.0 < args.decay_proportion <= 1.0:
        raise ConfigError(f"--decay_proportion must be in (0, 1], got {args.decay_proportion}")
    if args.lr_schedule == "wsd" and args.warmup_proportion + args.decay_proportion > 1.0:
        raise ConfigError(f"--warmup_proportion {args.warmup_proportion} + --decay_proportion "
                          f"{args.decay_proportion} is more than 1")
