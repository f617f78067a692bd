"""trainer/run_pretraining.py with a data trace, for the tests that check which samples each
rank trains on: torchrun runs this file in place of the trainer's entry.

Every sample row the loader hands to training appends one line (a hash of its input_ids) to
output_dir/data_trace_rank{r}.txt; then the trainer's own main() runs unchanged.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from trainer.config import parse_args
from trainer.data import ShardedTrainData
from trainer.run_pretraining import main


def trace_loader(output_dir: Path) -> None:
    """Wrap ShardedTrainData.__iter__ so that each yielded batch is traced before training."""
    real_iter = ShardedTrainData.__iter__

    def traced_iter(self):
        with open(output_dir / f"data_trace_rank{self.rank}.txt", "a", encoding="utf-8") as fh:
            for batch in real_iter(self):
                for row in batch["input_ids"].numpy():
                    fh.write(hashlib.sha1(row.tobytes()).hexdigest()[:16] + "\n")
                fh.flush()
                yield batch

    ShardedTrainData.__iter__ = traced_iter


if __name__ == "__main__":
    trace_loader(Path(parse_args(sys.argv[1:]).output_dir))
    sys.exit(main())
