"""trainer/run_pretraining.py on a machine whose load grows mid-run: once $SLOW_AFTER_S seconds
have passed since the loader handed out its first batch, every batch waits $SLOW_SLEEP_S
seconds before training gets it (a wrapper of the loader, from outside the training step), so
the pace of the steps drops as a neighbour's job would make it drop."""
from __future__ import annotations

import os
import sys
import time

# torch's first weight init imports torch._dynamo (2-7 s on a loaded machine): done here, before
# the trainer's clock starts, so that the budget under test is spent on steps
import torch._dynamo  # noqa: F401

from trainer.data import ShardedTrainData
from trainer.run_pretraining import main


def slow_loader(after_s: float, sleep_s: float) -> None:
    real_iter, first = ShardedTrainData.__iter__, []

    def slowed(self):
        for batch in real_iter(self):
            if not first:
                first.append(time.monotonic())
            if time.monotonic() - first[0] > after_s:
                time.sleep(sleep_s)
            yield batch

    ShardedTrainData.__iter__ = slowed


if __name__ == "__main__":
    slow_loader(float(os.environ["SLOW_AFTER_S"]), float(os.environ["SLOW_SLEEP_S"]))
    sys.exit(main())
