"""The checkpoints' flags: where the run writes, how often and how many checkpoints it keeps,
and what it resumes or starts from (a resume, or phase 2 from phase 1's weights)."""
from __future__ import annotations

from trainer.config.errors import ConfigError


def add_flags(parser) -> None:
    g = parser.add_argument_group("output and checkpoints")
    g.add_argument("--output_dir", help="logs, configs and checkpoints go here")
    g.add_argument("--checkpoint_every", type=int, default=200,
                   help="write a checkpoint every N steps and at the last one")
    g.add_argument("--keep_checkpoints", type=int, default=3, help="keep the last K checkpoints")
    g.add_argument("--resume_from_checkpoint", action="store_true",
                   help="continue from the newest complete checkpoint in output_dir (if any)")
    g.add_argument("--phase2", action="store_true", help="start from --init_checkpoint with a fresh "
                   "optimizer and schedule (use the seq 512 shards)")
    g.add_argument("--init_checkpoint", help="phase-1 output_dir, checkpoint dir or model.pt")


def check(args) -> None:
    for key in ("checkpoint_every", "keep_checkpoints"):
        if getattr(args, key) < 1:
            raise ConfigError(f"--{key} must be >= 1, got {getattr(args, key)}")
    if args.phase2 and not args.init_checkpoint:
        raise ConfigError("--phase2 needs --init_checkpoint (the phase-1 output_dir or checkpoint)")
