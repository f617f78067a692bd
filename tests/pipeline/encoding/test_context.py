"""The context figures of encode --pack (pipeline/encoding/context.py): deciles of the
articles' lengths from a histogram that merges across shards, and the segments of a row."""
from __future__ import annotations

import numpy as np

from pipeline.encoding.context import (
    deciles,
    length_bins,
    merge_bins,
    segment_lengths,
    segment_tokens,
    shares,
    tokens_in_long_articles,
)


def test_deciles_are_exact_below_256_and_merge_across_shards():
    rng = np.random.default_rng(0)
    a, b = rng.integers(1, 256, 300), rng.integers(1, 256, 77)
    merged = deciles(merge_bins([length_bins(a), length_bins(b)]))
    both = np.r_[a, b]
    assert merged == {f"p{q}": int(np.percentile(both, q, method="inverted_cdf")) for q in range(10, 100, 10)}
    assert deciles(length_bins(np.arange(10, 101, 10))) == {f"p{q}": q for q in range(10, 100, 10)}
    assert deciles({}) == {}


def test_long_lengths_fall_in_bins_of_under_one_percent():
    for n in (256, 257, 511, 512, 1000, 8191, 8192, 123_456, 9_999_999):
        (edge,) = (int(k) for k in length_bins(np.array([n])))
        assert edge <= n and (n - edge) / n < 1 / 128
    assert len(length_bins(np.arange(1, 100_000))) < 2500      # small in a task's marker


def test_segments_of_rows():
    starts = np.array([[1, 0, 0, 1, 0, 0, 0, 1],
                       [1, 0, 0, 0, 0, 0, 0, 0],
                       [1, 0, 1, 0, 0, 0, 0, 0]], dtype=np.int8)
    mask = np.array([[1] * 8, [1] * 8, [1] * 5 + [0] * 3], dtype=np.int8)
    assert segment_lengths(starts, mask).tolist() == [3, 4, 1, 8, 2, 3]
    counts = {"real": 21, "512": 0, "2048": 0, "8192": 0}
    assert segment_tokens(starts, mask) == counts
    assert shares({"512": 5, "2048": 1}, 10) == {"512": 0.5, "2048": 0.1, "8192": 0.0}
    assert tokens_in_long_articles(np.array([511, 512, 3000, 9000])) == {
        "512": 12512, "2048": 12000, "8192": 9000}
