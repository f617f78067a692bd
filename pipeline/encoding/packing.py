"""Packed rows, layout 2 (hdf5_format.PACKED_LAYOUT): whole articles in reading order, each
row's documents marked (`doc_starts`), memory bounded by a batch of rows.

Usage:
    with spilled_corpus(shard, encoder, work_dir) as corpus:       # pipeline/encoding/spill.py
        plan = plan_packed(corpus, max_seq=8192, dupe_factor=1, seed=42)   # (or a Corpus)
        for rows in plan.batches(8):
            batch = pack_batch(corpus, plan, rows, masker, rng)   # the HDF5 arrays + doc_starts

The stream: each pass (`dupe_factor` of them) takes the shard's documents in a new random
order and writes each as `[CLS] its tokens [SEP]` (the tokenizer's own cls/sep); the passes
follow each other. Rows of L = max_seq are cut from it in order, and every row begins with
[CLS]: a row that starts at a document's own [CLS] holds the next L stream tokens, a row that
continues a document gets an inserted [CLS] and the next L - 1. With L = 8:

    stream  [C] a1 a2 a3 a4 a5 a6 a7 a8 a9 [S] [C] b1 b2 [S] [C] c1 c2 ...
    row 0   [C] a1 a2 a3 a4 a5 a6 a7              doc_starts 1 0 0 0 0 0 0 0
    row 1   [C] a8 a9 [S] [C] b1 b2 [S]           doc_starts 1 0 0 0 1 0 0 0  ([C] inserted)
    row 2   [C] c1 c2 ...                         (c's own [CLS]: nothing inserted)

So an article longer than a row goes on in the next row in reading order, a row's segments
(the runs between its doc_starts) each hold one document's tokens and begin with [CLS], and
reading the rows of a pass one after the other gives each of its documents once. Only the
shard's last row is padded (the tokenizer's pad id, input_mask 0); when the shard's final
[SEP] alone would fill that row after its [CLS], it is dropped instead. Segment ids and
next-sentence labels are 0; the static masks (pipeline/encoding/masking.py) never choose a
[CLS], [SEP] or padding; word starts as for pairs where the corpus has them.

The plan keeps a few numbers per document and pass (where its `[CLS]` lies in the stream and
where its tokens lie in the corpus) and the rows that begin at a document's own [CLS]
(`sync_row`): every other row begins L - 1 stream tokens after the one before, so any batch of
rows is computed from these small arrays, never from an index over the whole stream.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class PackedPlan:
    """Where the documents of every pass lie in the stream, and where the rows begin."""

    max_seq: int
    slot_start: np.ndarray   # int64 [K+1]: stream position of slot k's [CLS]; [K] the stream's end
    slot_tok: np.ndarray     # int64 [K]: corpus index of slot k's first token (K: documents x passes)
    sync_row: np.ndarray     # int64 [S]: the rows that begin at a document's own [CLS] (row 0 too)
    sync_pos: np.ndarray     # int64 [S]: ... and that [CLS]'s stream position
    n_rows: int
    length: int              # stream tokens written (the stream less a dropped final [SEP])

    def __len__(self) -> int:
        return self.n_rows

    def batches(self, batch_rows: int):
        for start in range(0, self.n_rows, batch_rows):
            yield range(start, min(self.n_rows, start + batch_rows))

    def row_starts(self, rows: range) -> tuple[np.ndarray, np.ndarray]:
        """Each row's first stream position, and whether it continues a document (so its
        [CLS] is inserted and the stream starts at its position 1)."""
        L = self.max_seq
        r = np.arange(rows.start, rows.stop, dtype=np.int64)
        k = np.searchsorted(self.sync_row, r, side="right") - 1
        after = r - self.sync_row[k]
        cont = after > 0
        start = self.sync_pos[k] + np.where(cont, L + (after - 1) * (L - 1), 0)
        return start, cont


def plan_packed(corpus, max_seq: int, dupe_factor: int, seed: int) -> PackedPlan:
    """The stream of `dupe_factor` passes over the shuffled documents and its rows (module doc).
    `corpus`: anything with `doc_token_bounds` (int64 [D+1])."""
    rng = np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32, 3])
    bounds = np.asarray(corpus.doc_token_bounds, dtype=np.int64)
    n_docs = len(bounds) - 1
    order = np.concatenate([rng.permutation(n_docs) for _ in range(dupe_factor)] or
                           [np.zeros(0, np.int64)]).astype(np.int64)
    slot_start = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(np.diff(bounds)[order] + 2, out=slot_start[1:])   # + its [CLS] and [SEP]
    sync_row, sync_pos = _sync_points(slot_start, max_seq)
    total = int(slot_start[-1])
    plan = PackedPlan(max_seq, slot_start, bounds[:-1][order], sync_row, sync_pos,
                      n_rows=0, length=total)
    if total:
        left = total - int(sync_pos[-1])           # stream tokens from the last synced row on
        plan.n_rows = int(sync_row[-1]) + 1 + max(0, -(-(left - max_seq) // (max_seq - 1)))
        start, cont = plan.row_starts(range(plan.n_rows - 1, plan.n_rows))
        if cont[0] and start[0] == total - 1:      # the final [SEP] alone after a [CLS]: dropped
            plan.n_rows, plan.length = plan.n_rows - 1, total - 1
    return plan


def _sync_points(slot_start: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows that begin at a document's own [CLS]. After such a row at position p, the rows
    begin at p + L, p + L + (L - 1), ... until one of these is a document's [CLS]: found a
    window of documents at a time (about one document in L - 1 is one)."""
    starts, total = slot_start[:-1], int(slot_start[-1])
    rows, positions = [0], [0]
    if not total:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    row = pos = 0
    window0 = 4 * (L - 1) + 64
    while pos + L < total:
        first = pos + L
        j, window, found = int(np.searchsorted(starts, first)), window0, -1
        while j < len(starts):
            hit = np.flatnonzero((starts[j:j + window] - first) % (L - 1) == 0)
            if len(hit):
                found = j + int(hit[0])
                break
            j, window = j + window, window * 2
        if found < 0:
            break
        row += 1 + (int(starts[found]) - first) // (L - 1)
        pos = int(starts[found])
        rows.append(row)
        positions.append(pos)
    return np.array(rows, dtype=np.int64), np.array(positions, dtype=np.int64)


def pack_batch(corpus, plan: PackedPlan, rows: range, masker, rng: np.random.Generator) -> dict:
    """The HDF5 arrays of `rows` (consecutive rows of the plan), statically masked, with
    `doc_starts` (and `word_starts` when the corpus has word starts)."""
    L = plan.max_seq
    B = len(rows)
    start, cont = plan.row_starts(rows)
    col = np.arange(L, dtype=np.int64)
    pos = start[:, None] + col[None, :] - cont[:, None]        # a continuation's stream is 1 on
    inserted = np.zeros((B, L), dtype=bool)
    inserted[:, 0] = cont
    real = (pos < plan.length) | inserted
    streamed = real & ~inserted
    pos = np.where(streamed, pos, 0)
    slot = np.searchsorted(plan.slot_start, pos, side="right") - 1
    at = pos - plan.slot_start[slot]                             # 0: the document's own [CLS]
    del pos
    is_cls = ((at == 0) & streamed) | inserted
    is_sep = (at == plan.slot_start[slot + 1] - plan.slot_start[slot] - 1) & streamed
    body = streamed & ~is_cls & ~is_sep
    tok = (plan.slot_tok[slot] + at - 1)[body]
    del slot, at
    ids = np.full((B, L), masker.pad_id, dtype=np.int32)        # the vocabulary's pad id (XLM-R: 1)
    ids[body] = corpus.tokens[tok]
    ids[is_cls] = masker.cls_id
    ids[is_sep] = masker.sep_id
    starts = None
    word_starts = corpus.word_starts
    if word_starts is not None:
        starts = is_cls | is_sep                                  # words of their own
        starts[body] = word_starts[tok]
        starts[:, 1:] |= body[:, 1:] & is_cls[:, :-1]            # a segment's first token
    out = masker.mask_rows(ids, body, rng, starts=None if starts is None else starts & body)
    out["input_mask"] = real.view(np.int8)
    out["segment_ids"] = np.zeros((B, L), dtype=np.int8)
    out["next_sentence_labels"] = np.zeros(B, dtype=np.int8)
    out["doc_starts"] = is_cls.view(np.int8)
    if starts is not None:
        out["word_starts"] = starts.view(np.int8)
    return out
