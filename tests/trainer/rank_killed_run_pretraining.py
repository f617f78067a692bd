"""trainer/run_pretraining.py, but the rank named by $KILL_RANK SIGKILLs itself when it is
about to train step $KILL_AT_STEP in torchrun's first attempt (TORCHELASTIC_RESTART_COUNT 0):
a rank lost in the middle of training, for the --max-restarts tests. Restarted ranks run the
trainer unchanged. With $KILL_HOW=eio that rank instead raises the OSError (EIO) a failing
shard's read gives, naming its shard: how one rank's own fault reaches the user."""
from __future__ import annotations

import errno
import os
import signal
import sys

from trainer.loop import Trainer
from trainer.run_pretraining import main


def kill_rank_at_step(rank: int, step: int) -> None:
    real_step = Trainer.train_step

    def train_step(self, data, accum):
        if self.env.rank == rank and self.step + 1 == step:
            if os.environ.get("KILL_HOW") == "eio":
                raise OSError(errno.EIO, os.strerror(errno.EIO), os.environ["EIO_FILE"])
            os.kill(os.getpid(), signal.SIGKILL)
        return real_step(self, data, accum)

    Trainer.train_step = train_step


if __name__ == "__main__":
    if os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") == "0":
        kill_rank_at_step(int(os.environ["KILL_RANK"]), int(os.environ["KILL_AT_STEP"]))
    sys.exit(main())
