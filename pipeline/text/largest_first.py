"""Largest first into the smallest shard, planned on disk: the memory of a chunk of units,
whatever the number of documents.

Every unit (a document, or one copy of it) goes, largest first (ties: the earlier unit), to the
shard with the fewest bytes so far (ties: the lower shard index): the longest-processing-time
rule, whose shards differ by about one document at most. The order needs every size sorted,
which held in memory took about 110 bytes a document with the rest of shard's plan (6 GB at 53
million web documents). Here the sort is on disk, in `chunk`-unit pieces:

1. a histogram of the sizes (its length bounded by the largest size, not by the units) cuts the
   sizes into ranges of at most `chunk` units, largest first; a size held by more units is a
   range of its own;
2. one pass appends each unit's (size, index) to its range's file, in unit order;
3. range by range, largest first, its units sorted by (-size, index) go to the smallest shard,
   and each (index, shard) is appended to the file of its window of `chunk` consecutive units
   (a one-size range is in order already, and is read a chunk at a time);
4. `shards()` reads the windows in order: every unit's shard, in unit order.

    plan = plan_largest_first(lambda: (sizes_of(f) for f in files), n_shards, work / "train")
    for shard_index in plan.shards():   # one per unit, in unit order
        ...
"""
from __future__ import annotations

import heapq
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CHUNK_UNITS = 1 << 19     # units sorted or placed at a time: about 30 MB of arrays
SLICE = 1 << 16           # units turned into Python ints at a time
_SIZED = np.dtype([("size", "<i8"), ("unit", "<i8")])
_PLACED = np.dtype([("unit", "<i8"), ("shard", "<i4")])


@dataclass(frozen=True)
class LargestFirstPlan:
    """The shard of every unit, in windows of `chunk` units on disk."""

    folder: Path
    units: int
    chunk: int

    def shards(self) -> Iterator[int]:
        """Each unit's shard, in unit order: one window of `chunk` units in memory at a time."""
        for w, lo in enumerate(range(0, self.units, self.chunk)):
            n = min(self.chunk, self.units - lo)
            placed = np.fromfile(self.folder / f"window_{w}.bin", dtype=_PLACED)
            shard = np.full(n, -1, dtype=np.int32)
            shard[placed["unit"] - lo] = placed["shard"]
            if len(placed) != n or (shard < 0).any():
                raise RuntimeError(f"shard plan {self.folder}: window {w} is incomplete")
            for s in range(0, n, SLICE):
                yield from shard[s:s + SLICE].tolist()


def plan_largest_first(sizes: Callable[[], Iterable[np.ndarray]], n_shards: int, folder: Path,
                       chunk: int | None = None) -> LargestFirstPlan:
    """Plan the units whose sizes `sizes()` yields, in unit order, in pieces of any length (it is
    called twice); `folder` is emptied and holds the plan (about 28 bytes a unit on disk).
    `chunk`: units sorted or placed at a time [default: CHUNK_UNITS]."""
    chunk = chunk or CHUNK_UNITS
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    lows = _range_lows(sizes(), chunk)
    units = _distribute(sizes(), lows, folder)
    heap = [(0, i) for i in range(n_shards)]
    for r in range(len(lows)):
        path = folder / f"range_{r}.bin"
        if not path.exists():
            continue
        for batch in _largest_first_batches(path, chunk):
            _append_windows(folder, batch["unit"], _place(batch["size"], heap), chunk)
        path.unlink()
    return LargestFirstPlan(folder, units, chunk)


def _range_lows(pieces: Iterable[np.ndarray], chunk: int) -> np.ndarray:
    """The smallest size of each range, largest range first; a range holds at most `chunk`
    units, or one size."""
    values, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
    for piece in pieces:
        v, c = np.unique(np.asarray(piece, dtype=np.int64), return_counts=True)
        values, inverse = np.unique(np.concatenate([values, v]), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate([counts, c]), minlength=len(values)).astype(np.int64)
    lows, held = [], 0
    for value, count in zip(values[::-1].tolist(), counts[::-1].tolist()):
        if not lows or held + count > chunk:
            lows.append(value)
            held = 0
        else:
            lows[-1] = value
        held += count
    return np.asarray(lows, dtype=np.int64)


def _distribute(pieces: Iterable[np.ndarray], lows: np.ndarray, folder: Path) -> int:
    """Append each unit's (size, index) to its range's file, in unit order; the units' count."""
    ascending = lows[::-1]
    units = 0
    for piece in pieces:
        piece = np.asarray(piece, dtype=np.int64)
        records = np.empty(len(piece), dtype=_SIZED)
        records["size"], records["unit"] = piece, np.arange(units, units + len(piece))
        ranges = len(lows) - np.searchsorted(ascending, piece, side="right")
        _append_grouped(records, ranges, lambda r: folder / f"range_{r}.bin")
        units += len(piece)
    return units


def _largest_first_batches(path: Path, chunk: int) -> Iterator[np.ndarray]:
    """A range's units by (-size, index): whole when it holds several sizes (at most `chunk`
    units), else (one size, already in unit order) `chunk` units at a time."""
    total = path.stat().st_size // _SIZED.itemsize
    if total <= chunk:
        records = np.fromfile(path, dtype=_SIZED)
        yield records[np.argsort(-records["size"], kind="stable")]   # stable: the index breaks ties
        return
    for s in range(0, total, chunk):   # one size (_range_lows): in unit order already
        yield np.fromfile(path, dtype=_SIZED, count=chunk, offset=s * _SIZED.itemsize)


def _place(sizes: np.ndarray, heap: list[tuple[int, int]]) -> np.ndarray:
    """Each unit, in the order given, into the shard with the fewest bytes (the heap's top)."""
    out = np.empty(len(sizes), dtype=np.int32)
    for s in range(0, len(sizes), SLICE):
        placed = []
        for size in sizes[s:s + SLICE].tolist():
            total, i = heap[0]
            placed.append(i)
            heapq.heapreplace(heap, (total + size, i))
        out[s:s + len(placed)] = placed
    return out


def _append_windows(folder: Path, units: np.ndarray, shards: np.ndarray, chunk: int) -> None:
    records = np.empty(len(units), dtype=_PLACED)
    records["unit"], records["shard"] = units, shards
    _append_grouped(records, units // chunk, lambda w: folder / f"window_{w}.bin")


def _append_grouped(records: np.ndarray, groups: np.ndarray, path_of: Callable[[int], Path]) -> None:
    """Append each group's records, in their order, to its file."""
    order = np.argsort(groups, kind="stable")
    keys, starts = np.unique(groups[order], return_index=True)
    for key, lo, hi in zip(keys.tolist(), starts.tolist(), [*starts[1:].tolist(), len(order)]):
        with open(path_of(key), "ab") as fh:
            records[order[lo:hi]].tofile(fh)
