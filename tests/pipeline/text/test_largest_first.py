"""pipeline/text/largest_first.py: the plan on disk is exactly the largest-first rule written
plainly in memory, whatever the chunk, the pieces the sizes come in, and the ties."""
from __future__ import annotations

import functools
import heapq

import numpy as np
import pytest

from pipeline.text import largest_first
from pipeline.text.largest_first import plan_largest_first


def largest_first_in_memory(sizes: np.ndarray, n_shards: int) -> list[int]:
    """The rule as it was planned in memory: largest first (ties: earlier unit) into the shard
    with the fewest bytes (ties: lower index)."""
    shard_of = [0] * len(sizes)
    heap = [(0, i) for i in range(n_shards)]
    for d in sorted(range(len(sizes)), key=lambda d: (-int(sizes[d]), d)):
        total, i = heap[0]
        shard_of[d] = i
        heapq.heapreplace(heap, (total + int(sizes[d]), i))
    return shard_of


@pytest.mark.parametrize("kind", ["few sizes", "spread", "zipf"])
def test_the_plan_on_disk_is_the_rule_in_memory(tmp_path, kind):
    rng = np.random.default_rng(["few sizes", "spread", "zipf"].index(kind))
    for _trial in range(40):
        n, n_shards, chunk = int(rng.integers(1, 500)), int(rng.integers(1, 25)), int(rng.integers(1, 80))
        if kind == "few sizes":
            sizes = rng.integers(1, 4, n)
        else:
            sizes = rng.integers(1, 10_000, n) if kind == "spread" else rng.zipf(1.6, n) % 700 + 1
        pieces = np.split(sizes, np.sort(rng.integers(0, n + 1, int(rng.integers(0, 7)))))  # empty ones too
        plan = plan_largest_first(functools.partial(iter, pieces), n_shards, tmp_path / "plan", chunk)
        assert plan.units == n
        assert list(plan.shards()) == largest_first_in_memory(sizes, n_shards), (n, n_shards, chunk)


def test_a_size_held_by_more_units_than_a_chunk_is_read_a_chunk_at_a_time(tmp_path, monkeypatch):
    sizes = np.array([5] * 1000 + [9, 3] * 10 + [5] * 37)
    read = []
    real = np.fromfile

    def counted(*args, **kw):
        out = real(*args, **kw)
        if "range_" in str(args[0]):
            read.append(len(out))
        return out

    monkeypatch.setattr(largest_first.np, "fromfile", counted)
    plan = plan_largest_first(lambda: [sizes[:600], sizes[600:]], 7, tmp_path / "plan", chunk=64)
    assert list(plan.shards()) == largest_first_in_memory(sizes, 7)
    assert max(read) <= 64 and sum(read) == len(sizes)
    assert not list((tmp_path / "plan").glob("range_*"))   # each range's file goes once placed


def test_the_folder_is_emptied_and_an_incomplete_plan_is_refused(tmp_path):
    folder = tmp_path / "plan"
    folder.mkdir()
    (folder / "window_0.bin").write_bytes(b"\0" * 12)   # a killed run's leftover
    plan = plan_largest_first(lambda: [np.array([3, 1, 2])], 2, folder, chunk=2)
    assert list(plan.shards()) == [0, 1, 1]
    (folder / "window_1.bin").write_bytes(b"")
    with pytest.raises(RuntimeError, match="window 1 is incomplete"):
        list(plan.shards())
