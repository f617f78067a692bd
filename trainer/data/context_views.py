"""The rows of the context evaluation (trainer/evaluation/context.py): the masked tokens deep inside long
held-out articles, each seen in several *views* that differ only in how much of the article is
around it.

    segments = long_segments(arrays)              # the segments of >= 1,024 tokens and their masks
    rows = view_rows(segments, 2048)              # the long view: each segment its own row
    rows = view_rows(segments, 128)               # 127 tokens of the segment a row, after its [CLS]
    for batch in view_batches(rows, tokens=16384, unpad=True): ...   # the trainer's batches

A *segment* is a run of a packed row (layout 2) between its `doc_starts` marks: one document's
tokens, led by a [CLS] (the document's own, or the one put before a row that continues it). The
evaluation takes the segments of at least MIN_SEGMENT (2 x 512) tokens and scores their static
masks (those of the test files: every run, and every model, is scored on the same tokens).

A view of width W makes rows of at most W tokens: a segment that fits is one row, as the trainer
evaluates it within documents (positions from its [CLS]); a longer one is cut into consecutive
windows of W - 1 of its tokens after the [CLS], each made a row `[CLS] window` (positions restart,
as every segment starts with [CLS] in training). The last window is moved back to hold W - 1
tokens where the segment has them, and scores only the masks the window before did not, so each
masked token is scored exactly once in every view, at the same id, with the same [MASK]s around it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from pipeline.encoding.hdf5_format import DATASETS
from trainer.data.loader import to_batch
from trainer.data.shards import DOC_STARTS

MIN_SEGMENT = 2 * 512
SHORT_VIEWS = (128, 512)


@dataclass(frozen=True)
class Segment:
    ids: np.ndarray         # [n] the segment's tokens as the test file has them ([CLS] first, masks in)
    positions: np.ndarray   # [m] its masked positions (ascending, >= 1)
    labels: np.ndarray      # [m] their original ids


@dataclass(frozen=True)
class ViewRow:
    ids: np.ndarray         # [w] the row: [CLS] and the window (or the whole segment)
    positions: np.ndarray   # the masked positions it scores, in the row
    labels: np.ndarray


def long_segments(arrays: dict[str, np.ndarray], min_len: int = MIN_SEGMENT) -> list[Segment]:
    """The segments of at least `min_len` tokens of packed rows (read_shard's arrays with
    doc_starts) that hold masked tokens."""
    out = []
    ids, real, starts = arrays["input_ids"], arrays["input_mask"], arrays[DOC_STARTS]
    positions, labels = arrays["masked_lm_positions"], arrays["masked_lm_ids"]
    for r in range(len(ids)):
        n = int(real[r].sum())
        cuts = sorted(set(np.flatnonzero(starts[r, :n]).tolist()) | {0}) + [n]
        used = np.cumprod(positions[r] != 0).astype(bool)   # NVIDIA's rule: up to the first 0
        pos, lab = positions[r][used].astype(np.int64), labels[r][used].astype(np.int64)
        for a, b in zip(cuts, cuts[1:]):
            inside = (pos > a) & (pos < b)
            if b - a >= min_len and inside.any():
                out.append(Segment(ids[r, a:b].astype(np.int64), pos[inside] - a, lab[inside]))
    return out


def view_rows(segments: list[Segment], width: int) -> list[ViewRow]:
    """The rows of the view of `width` tokens (see the module docstring)."""
    rows = []
    for seg in segments:
        n = len(seg.ids)
        if n <= width:
            rows.append(ViewRow(seg.ids, seg.positions, seg.labels))
            continue
        step = width - 1                       # window j: tokens 1 + j*step ... of the segment
        for start in range(1, n, step):
            first = max(1, min(start, n - step))   # the last window moved back to be full
            end = first + step
            take = (seg.positions >= start) & (seg.positions < start + step)
            if take.any():
                rows.append(ViewRow(np.concatenate([seg.ids[:1], seg.ids[first:end]]),
                                    seg.positions[take] - first + 1, seg.labels[take]))
    return rows


def view_batches(rows: list[ViewRow], tokens: int, unpad: bool, pin_memory: bool = False) -> Iterator[dict]:
    """The trainer's batches of `rows` (to_batch: one segment a row), each padded to its longest
    row and holding at most `tokens` tokens (at least one row)."""
    i = 0
    while i < len(rows):
        width, j = len(rows[i].ids), i + 1
        while j < len(rows) and max(width, len(rows[j].ids)) * (j + 1 - i) <= tokens:
            width = max(width, len(rows[j].ids))
            j += 1
        yield to_batch(_arrays(rows[i:j], width), pin_memory=pin_memory, unpad=unpad, within=True)
        i = j


def _arrays(rows: list[ViewRow], width: int) -> dict[str, np.ndarray]:
    """The rows in the HDF5 contract's layout (padded with 0; one segment a row)."""
    b, p = len(rows), max(len(r.positions) for r in rows)
    shape = {"L": (b, width), "P": (b, p), None: (b,)}
    out = {key: np.zeros(shape[w], dtype) for key, (dtype, w) in DATASETS.items()}
    out[DOC_STARTS] = np.zeros((b, width), np.int8)
    out[DOC_STARTS][:, 0] = 1
    for k, row in enumerate(rows):
        out["input_ids"][k, :len(row.ids)] = row.ids
        out["input_mask"][k, :len(row.ids)] = 1
        out["masked_lm_positions"][k, :len(row.positions)] = row.positions
        out["masked_lm_ids"][k, :len(row.positions)] = row.labels
    return out
