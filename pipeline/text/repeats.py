"""Boilerplate removal: a line that repeats an earlier line of the corpus word for word goes.

"Earlier" is document order: files in name order, lines in file order, so the first copy stays
and the result is the same whatever --workers. Memory is bounded by a task, not by the corpus:
each file's line hashes are written to disk, cut into partitions by hash; each partition is
then read alone to find its repeats; each file finally reads only its own slice of every
partition's list of repeats. Only lines longer than MIN_CHARS count: short lines ("Населення.")
repeat by nature.

Usage (the filter stage's three steps; `work` is a scratch folder):
    scan_file(read_pieces(path, PIECE_CHARS), index, work, partitions)   # one task per file
    find_repeats(partition, n_files, work)               # one task per partition
    repeated = repeated_lines(index, work, partitions)   # set of line numbers of file `index`
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from common.atomic import atomic_path

MIN_CHARS = 20
PARTITION_BYTES = 256_000_000   # input bytes per partition: ~16 bytes of hashes per line
_ROW = np.dtype([("hash", "<u8"), ("line", "<u4")])
_DROP = np.dtype([("file", "<u4"), ("line", "<u4")])


def partitions_for(input_bytes: int) -> int:
    return max(1, -(-input_bytes // PARTITION_BYTES))


def line_hash(line: str) -> int:
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest(), "little")


def _hash_file(work: Path, index: int) -> Path:
    return work / f"hashes_{index:06d}.npz"


def _drop_file(work: Path, partition: int) -> Path:
    return work / f"repeats_{partition:04d}.npy"


def scan_file(pieces: Iterable[str], index: int, work: Path, partitions: int) -> None:
    """Hash the long lines of file number `index` (its non-blank lines, numbered from 0), given
    as pieces of its text cut at line ends (read_pieces), grouped by partition; written
    atomically, so a rerun finds it done (without reading the file)."""
    out = _hash_file(work, index)
    if out.exists():
        return
    tables = []
    number = 0
    for piece in pieces:
        rows = []
        for line in piece.split("\n"):
            line = line.strip()
            if not line:
                continue
            if len(line) > MIN_CHARS:
                rows.append((line_hash(line), number))
            number += 1
        tables.append(np.array(rows, dtype=_ROW))   # 12 bytes a line, not a tuple's 100
    table = np.concatenate(tables) if tables else np.zeros(0, dtype=_ROW)
    part = (table["hash"] % np.uint64(partitions)).astype(np.int64)
    order = np.argsort(part, kind="stable")
    table = table[order]
    bounds = np.searchsorted(part[order], np.arange(partitions + 1))
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, table=table, bounds=bounds)


def find_repeats(partition: int, n_files: int, work: Path) -> int:
    """The repeats among one partition's hashes: every occurrence after the first, as
    (file, line) sorted by file; returns how many."""
    out = _drop_file(work, partition)
    if out.exists():
        return len(np.load(out, mmap_mode="r"))
    hashes, files, lines = [], [], []
    for index in range(n_files):
        with np.load(_hash_file(work, index)) as data:
            lo, hi = data["bounds"][partition], data["bounds"][partition + 1]
            rows = data["table"][lo:hi]
        # copies: a view would keep the whole file's table, every partition's, alive (at 5 GB of
        # text, 690 MB in the task that should hold a partition's 1/P of it)
        hashes.append(rows["hash"].copy())
        lines.append(rows["line"].copy())
        files.append(np.full(len(rows), index, dtype=np.uint32))
    hashes = np.concatenate(hashes) if hashes else np.zeros(0, np.uint64)
    order = np.argsort(hashes, kind="stable")  # equal hashes stay in document order
    sorted_hashes = hashes[order]
    repeat = np.zeros(len(order), dtype=bool)
    repeat[1:] = sorted_hashes[1:] == sorted_hashes[:-1]
    chosen = order[repeat]
    drops = np.zeros(len(chosen), dtype=_DROP)
    if len(chosen):
        drops["file"] = np.concatenate(files)[chosen]
        drops["line"] = np.concatenate(lines)[chosen]
        drops = drops[np.argsort(drops["file"], kind="stable")]
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, drops)
    return len(drops)


def repeated_lines(index: int, work: Path, partitions: int) -> set[int]:
    """Line numbers (non-blank lines, from 0) of file `index` that repeat an earlier line."""
    found: set[int] = set()
    for partition in range(partitions):
        drops = np.load(_drop_file(work, partition), mmap_mode="r")
        if not len(drops):
            continue
        files = drops["file"]
        lo, hi = np.searchsorted(files, index, "left"), np.searchsorted(files, index, "right")
        found.update(np.asarray(drops["line"][lo:hi]).tolist())
    return found
