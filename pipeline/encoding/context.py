"""How much of its own article a token sees: the figures encode --pack reports (issue 44).

Two kinds of figure, both cheap to keep while encoding and exact to merge across shards:

- the articles' lengths in tokens (their word pieces, without [CLS]/[SEP]): a sparse histogram
  (`length_bins`: exact below 256 tokens, then bins of 1/128 to 1/256 of the length) whose
  deciles (`deciles`) the summary gives, and the share of the tokens in articles of at least
  512, 2,048 and 8,192 tokens (what rows of that length could hold at most);
- the share of a row's tokens whose segment (the run of one document's tokens in the row,
  its [CLS] and [SEP] counted, hdf5_format's doc_starts) is at least 512, 2,048 and 8,192
  tokens long (`segment_tokens`): the context those tokens are trained with.

Usage:
    bins = length_bins(doc_lengths)                  # {"123": 4, ...} (JSON keys)
    deciles(merge_bins([bins_a, bins_b]))            # {"p10": ..., ..., "p90": ...}
    counts = segment_tokens(doc_starts, input_mask)  # {"real": n, "512": n, "2048": n, "8192": n}
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

THRESHOLDS = (512, 2048, 8192)
EXACT_BELOW = 256          # lengths below this are their own bin


def length_bins(lengths: np.ndarray) -> dict[str, int]:
    """A sparse histogram of `lengths` (positive ints): {lower edge: count}, keys as strings."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if not len(lengths):
        return {}
    exponent = np.frexp(lengths.astype(np.float64))[1]        # bit length, exact below 2**53
    shift = np.maximum(exponent - EXACT_BELOW.bit_length() + 1, 0)
    edges = (lengths >> shift) << shift
    keys, counts = np.unique(edges, return_counts=True)
    return {str(int(k)): int(c) for k, c in zip(keys, counts)}


def merge_bins(parts: Iterable[dict]) -> dict[str, int]:
    """The sum of several histograms of length_bins, sorted by length."""
    total: dict[int, int] = {}
    for part in parts:
        for k, c in (part or {}).items():
            total[int(k)] = total.get(int(k), 0) + int(c)
    return {str(k): total[k] for k in sorted(total)}


def deciles(bins: dict) -> dict[str, int]:
    """p10 ... p90 of a histogram of length_bins: the smallest bin whose cumulative count
    reaches the share (numpy's "inverted_cdf"); exact below EXACT_BELOW."""
    items = sorted((int(k), int(c)) for k, c in bins.items())
    total = sum(c for _, c in items)
    out: dict[str, int] = {}
    if not total:
        return out
    cum, i = 0, 0
    for q in range(10, 100, 10):
        while cum * 100 < q * total:
            cum += items[i][1]
            i += 1
        out[f"p{q}"] = items[i - 1][0]
    return out


def tokens_in_long_articles(lengths: np.ndarray) -> dict[str, int]:
    """The tokens of the articles at least each threshold long: {"512": n, ...}."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return {str(t): int(lengths[lengths >= t].sum()) for t in THRESHOLDS}


def segment_lengths(doc_starts: np.ndarray, input_mask: np.ndarray) -> np.ndarray:
    """The length of every segment of the rows, row by row (real tokens a prefix of each row)."""
    mask = np.asarray(input_mask).astype(bool)
    r, c = np.nonzero(np.asarray(doc_starts).astype(bool) & mask)
    real = mask.sum(axis=1)
    end = np.empty_like(c)
    if len(c):
        same_row = r[1:] == r[:-1]
        end[:-1] = np.where(same_row, c[1:], real[r[:-1]])
        end[-1] = real[r[-1]]
    return (end - c).astype(np.int64)


def segment_tokens(doc_starts: np.ndarray, input_mask: np.ndarray) -> dict[str, int]:
    """The rows' real tokens ("real") and those in segments at least each threshold long."""
    seg = segment_lengths(doc_starts, input_mask)
    return {"real": int(np.count_nonzero(input_mask)),
            **{str(t): int(seg[seg >= t].sum()) for t in THRESHOLDS}}


def add_counts(total: dict, part: dict) -> dict:
    """`total` + `part`, key by key (counts of segment_tokens or tokens_in_long_articles)."""
    for k, v in part.items():
        total[k] = total.get(k, 0) + int(v)
    return total


def shares(counts: dict, of: int) -> dict[str, float]:
    """The thresholds' counts as shares of `of` (rounded to 4 places; 0 when `of` is 0)."""
    return {str(t): round(counts.get(str(t), 0) / of, 4) if of else 0.0 for t in THRESHOLDS}
