"""trainer/run_pretraining.py, but when it is about to write the checkpoint of step
$FILL_AT_STEP, rank 0 fills the output disk (another writer takes the space) leaving
$FILL_LEAVE bytes free: after the free-space check ($FILL_WHEN=write, the default) or before it
($FILL_WHEN=check); with $FILL_WHEN=step, before training step $FILL_AT_STEP instead (the
next log line that needs a new page fails). The disk full is real (a small tmpfs the test mounted); only its timing is
chosen here."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from trainer import loop as training
from trainer.run_pretraining import main

FILLER = ".other_writer"


def fill(folder: Path, leave: int) -> None:
    """Take all but `leave` bytes of the disk of `folder` (allocated, not sparse)."""
    size = shutil.disk_usage(folder).free - leave
    if size > 0:
        with open(Path(folder) / FILLER, "ab") as fh:
            os.posix_fallocate(fh.fileno(), fh.tell(), size)


def fill_at(step: int, leave: int, when: str) -> None:
    if when == "step":
        real_step = training.Trainer.train_step

        def train_step(self, data, accum):
            if self.step + 1 == step and self.env.is_main:
                fill(self.out, leave)
            return real_step(self, data, accum)

        training.Trainer.train_step = train_step
        return
    if when == "check":
        real = training.Trainer.save

        def save(self, **kw):
            if self.step == step and self.env.is_main:
                fill(self.out, leave)
            return real(self, **kw)

        training.Trainer.save = save
        return
    real_write = training.save_checkpoint

    def save_checkpoint(output_dir, at, env, **kw):
        if at == step and env.is_main:
            fill(output_dir, leave)
        return real_write(output_dir, at, env, **kw)

    training.save_checkpoint = save_checkpoint


if __name__ == "__main__":
    fill_at(int(os.environ["FILL_AT_STEP"]), int(os.environ.get("FILL_LEAVE", 65536)),
            os.environ.get("FILL_WHEN", "write"))
    sys.exit(main())
