"""The sample order of an epoch: a pure function of (seed, epoch), cut into one block per rank.

For each epoch the training files are shuffled and each file's samples are permuted, both from
(seed, epoch) alone, giving one global sample sequence per epoch that does not depend on the
world size. That sequence is cut into `world_size` equal contiguous blocks (the remainder, fewer
than world_size samples, is dropped), so every rank sees the same number of samples and no rank
runs dry.

    order = EpochOrder(sizes=[160, 96, 128], seed=42, world_size=2)
    order.pieces(rank=0, epoch=3)     # [Piece(epoch, file, start, stop), ...] in reading order
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from trainer.data.shards import DataError


@dataclass(frozen=True)
class Piece:
    """Rows [start, stop) of file `file` in that file's epoch permutation."""
    epoch: int
    file: int
    start: int
    stop: int


class EpochOrder:
    """The (seed, epoch) -> sample order function, and each rank's block of it."""

    def __init__(self, sizes: Sequence[int], seed: int, world_size: int):
        self.sizes = list(sizes)
        self.seed = int(seed)
        self.world_size = int(world_size)
        self.total = sum(self.sizes)
        self.per_rank = self.total // self.world_size
        if self.per_rank == 0:
            raise DataError(f"{self.total} training samples cannot feed {self.world_size} ranks: "
                            "encode more data or use fewer ranks")

    def file_order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch, 1]).permutation(len(self.sizes))

    def sample_order(self, epoch: int, file: int) -> np.ndarray:
        # Keyed by the file's index in the sorted list, not by its position this epoch.
        return np.random.default_rng([self.seed, epoch, 2, file]).permutation(self.sizes[file])

    def pieces(self, rank: int, epoch: int) -> list[Piece]:
        lo, hi = rank * self.per_rank, (rank + 1) * self.per_rank
        out, base = [], 0
        for f in self.file_order(epoch):
            f = int(f)
            a, b = max(lo, base), min(hi, base + self.sizes[f])
            if a < b:
                out.append(Piece(epoch, f, a - base, b - base))
            base += self.sizes[f]
        return out
