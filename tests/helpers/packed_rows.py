"""Packed rows of layout 2 (pipeline/encoding/packing.py, hdf5_format.PACKED_LAYOUT) for tests:
read back (the masks undone, the stream rebuilt from the rows in order, and the layout's rules
checked on the way), and built from token lists for the trainer's tests and benches: the
documents in order, each written `[CLS] tokens [SEP]`, rows of L tokens cut from that stream,
every row starting with [CLS] (one is put at position 0 when the row continues a document),
`doc_starts` 1 at position 0 and at every document's own [CLS], only the last row padded.

    ids = unmask(arrays); docs = documents_of_rows(ids, mask, doc_starts, cls_id, sep_id)
    docs = counting_documents(40, (5, 300), seed=0)
    rows = pack_documents(docs, seq_len=64)                # input_ids, input_mask, segment_ids, doc_starts
    rows = mask_rows(rows, max_pred=10, seed=0)            # + masked_lm_positions / _ids, NSP labels
    rows = mask_rows(rows, 10, None, positions=chosen)     # (of unmasked rows) masks at the caller's positions
    write_packed_shard(path, docs, 64, 10, seed=0)         # one HDF5 file (root attribute packed = 2)
    write_rows(path, rows)                                 # the same, of rows made already
    ref, order = segments_as_rows(batch)                   # each segment its own padded row
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.encoding.hdf5_format import DATASETS, OPTIONAL_DATASETS, PACKED_ATTR, PACKED_LAYOUT
from tests.helpers.synthetic_shards import CLS, FIRST_PIECE, MASK, SEP


def unmask(arrays: dict) -> np.ndarray:
    """input_ids with the masked positions' original ids put back."""
    ids = np.array(arrays["input_ids"])
    pos, orig = np.asarray(arrays["masked_lm_positions"]), np.asarray(arrays["masked_lm_ids"])
    real = pos > 0
    np.put_along_axis(ids, pos, np.where(real, orig, np.take_along_axis(ids, pos, 1)), axis=1)
    return ids


def documents_of_rows(ids, mask, doc_starts, cls_id: int, sep_id: int) -> list[tuple]:
    """The documents the rows hold, in stream order, each as its tokens (no [CLS]/[SEP]),
    checking on the way that: every row begins with [CLS] and doc_starts marks exactly its
    position 0 and the documents' own [CLS]s; a segment holds one document ([CLS] only first,
    [SEP] only last); a row continues the document before it exactly when that one had not
    ended, and then its [CLS] is an inserted one. The last document may lack its [SEP] (the
    shard's final [SEP] is dropped when it would fill a row alone)."""
    ids, mask, doc_starts = (np.asarray(a) for a in (ids, mask, doc_starts))
    assert (ids[:, 0] == cls_id).all() and (mask[:, 0] == 1).all()
    assert ((doc_starts != 0) == ((ids == cls_id) & (mask != 0))).all()
    docs: list[tuple] = []
    current: list[int] | None = None          # the document being read, until its [SEP]
    for row, m in zip(ids, mask):
        real = row[:int(m.sum())]
        assert (m[:len(real)] == 1).all()
        cuts = list(np.flatnonzero(real == cls_id)) + [len(real)]
        for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
            seg = list(real[a + 1:b])         # the segment after its [CLS]
            assert cls_id not in seg and sep_id not in seg[:-1]
            if k > 0 or current is None:      # the document's own [CLS]: a new document
                assert current is None, "a document started before the one before it ended"
                current = []
            current += seg[:-1] if seg and seg[-1] == sep_id else seg
            if seg and seg[-1] == sep_id:
                docs.append(tuple(current))
                current = None
    if current is not None:
        docs.append(tuple(current))
    return docs


def counting_documents(n: int, lengths: tuple[int, int], seed: int, vocab_size: int = 200) -> list[list[int]]:
    """`n` documents of lengths drawn in [lo, hi], each counting upwards from a random piece
    (learnable: a token follows from the one before)."""
    rng = np.random.default_rng(seed)
    n_pieces = vocab_size - FIRST_PIECE
    docs = []
    for _ in range(n):
        start, length = int(rng.integers(n_pieces)), int(rng.integers(lengths[0], lengths[1] + 1))
        docs.append([FIRST_PIECE + (start + j) % n_pieces for j in range(length)])
    return docs


def pack_documents(docs: list[list[int]], seq_len: int, cls: int = CLS, sep: int = SEP,
                   pad: int = 0) -> dict[str, np.ndarray]:
    """The rows of the second packed layout (see the module doc), in the contract's dtypes."""
    stream, starts = [], set()
    for doc in docs:
        starts.add(len(stream))
        stream += [cls, *doc, sep]
    rows, marks, i = [], [], 0
    while i < len(stream):
        if i in starts:   # the row begins with a document's own [CLS]
            row, begin = stream[i:i + seq_len], i
        else:             # it continues a document: a [CLS] of its own, then L - 1 tokens
            row, begin = [cls] + stream[i:i + seq_len - 1], i - 1
        mark = [0] * len(row)
        mark[0] = 1
        for j in range(1, len(row)):
            mark[j] = int(begin + j in starts)
        i = begin + len(row)
        rows.append(row)
        marks.append(mark)
    n = len(rows)
    out = {"input_ids": np.full((n, seq_len), pad, DATASETS["input_ids"][0]),
           "input_mask": np.zeros((n, seq_len), DATASETS["input_mask"][0]),
           "segment_ids": np.zeros((n, seq_len), DATASETS["segment_ids"][0]),
           "doc_starts": np.zeros((n, seq_len), OPTIONAL_DATASETS["doc_starts"][0])}
    for r, (row, mark) in enumerate(zip(rows, marks)):
        out["input_ids"][r, :len(row)] = row
        out["input_mask"][r, :len(row)] = 1
        out["doc_starts"][r, :len(row)] = mark
    return out


def mask_rows(rows: dict[str, np.ndarray], max_pred: int, seed: int | None, rate: float = 0.15,
              cls: int = CLS, sep: int = SEP, mask: int = MASK,
              positions: list | None = None) -> dict[str, np.ndarray]:
    """Static masks as encode writes them: `rate` of a row's tokens that are not [CLS], [SEP] or
    padding (at most max_pred, at least 1), ascending, replaced by [MASK]; NSP labels 0. With
    `positions` (for each row, the positions to mask: ascending, at most max_pred, maybe none)
    those instead, and no draw (`seed` and `rate` unused)."""
    if (seed is None) == (positions is None):
        raise ValueError("mask_rows takes either a seed (masks drawn) or positions")
    rng = np.random.default_rng(seed) if positions is None else None
    ids = rows["input_ids"].copy()
    n = len(ids)
    pos = np.zeros((n, max_pred), DATASETS["masked_lm_positions"][0])
    mids = np.zeros((n, max_pred), DATASETS["masked_lm_ids"][0])
    for r in range(n):
        if positions is not None:
            chosen = np.asarray(positions[r], dtype=np.int64)
            assert len(chosen) <= max_pred and (np.diff(chosen) > 0).all(), (r, chosen)
        else:
            cand = np.flatnonzero((rows["input_mask"][r] == 1) & (ids[r] != cls) & (ids[r] != sep))
            if not len(cand):
                continue
            k = min(max_pred, max(1, round(rate * len(cand))))
            chosen = np.sort(rng.choice(cand, k, replace=False))
        k = len(chosen)
        pos[r, :k], mids[r, :k] = chosen, ids[r, chosen]
        ids[r, chosen] = mask
    return {**rows, "input_ids": ids, "masked_lm_positions": pos, "masked_lm_ids": mids,
            "next_sentence_labels": np.zeros(n, DATASETS["next_sentence_labels"][0])}


def write_packed_shard(path: str | Path, docs: list[list[int]], seq_len: int, max_pred: int,
                       seed: int, marks: bool = True, rate: float = 0.15) -> Path:
    """One HDF5 file of packed rows: the second layout (doc_starts, `packed` = 2), or with
    `marks` False the first (no doc_starts, `packed` = 1)."""
    rows = mask_rows(pack_documents(docs, seq_len), max_pred, seed, rate)
    if not marks:
        rows.pop("doc_starts")
    return write_rows(path, rows)


def write_rows(path: str | Path, rows: dict[str, np.ndarray]) -> Path:
    """One HDF5 file of masked packed rows (mask_rows'): the second layout (`packed` = 2) when
    they have doc_starts, else the first (`packed` = 1). Its folder made if need be."""
    import h5py

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(path, "w") as fh:
        for key, arr in rows.items():
            fh.create_dataset(key, data=arr, compression="gzip", compression_opts=4)
        fh.attrs[PACKED_ATTR] = PACKED_LAYOUT if "doc_starts" in rows else 1
    return path


def segments_as_rows(batch: dict, pad: int = 0):
    """(the reference batch, order): every segment of every row of a trainer batch (torch
    tensors with doc_starts) as its own padded row of the same length, its masked slots with it;
    `order` lists, for each real masked slot of the reference in its order, the index of the
    same slot among the batch's real masked slots (the order of `out.mlm_logits`)."""
    import torch

    ids, real, starts = batch["input_ids"], batch["input_mask"].bool(), batch["doc_starts"].bool()
    positions, labels = batch["masked_lm_positions"], batch["masked_lm_labels"]
    B, L = ids.shape
    P = positions.shape[1]
    slot_of = {}   # (row, position) -> index among the batch's real masked slots
    for b in range(B):
        for p, lab in zip(positions[b].tolist(), labels[b].tolist()):
            if lab >= 0:
                slot_of[(b, p)] = len(slot_of)
    rows = []
    for b in range(B):
        n = int(real[b].sum())
        cuts = [j for j in range(n) if j == 0 or starts[b, j]] + [n]
        rows += [(b, s, e) for s, e in zip(cuts[:-1], cuts[1:])]
    R = len(rows)
    ref = {k: torch.zeros(R, L, dtype=torch.long) for k in ("input_ids", "input_mask", "segment_ids")}
    ref["input_ids"].fill_(pad)
    ref["masked_lm_positions"] = torch.zeros(R, P, dtype=torch.long)
    ref["masked_lm_labels"] = torch.full((R, P), -1, dtype=torch.long)
    ref["next_sentence_labels"] = torch.zeros(R, dtype=torch.long)
    order = []
    for r, (b, s, e) in enumerate(rows):
        ref["input_ids"][r, :e - s] = ids[b, s:e]
        ref["input_mask"][r, :e - s] = 1
        k = 0
        for p, lab in zip(positions[b].tolist(), labels[b].tolist()):
            if lab >= 0 and s <= p < e:
                ref["masked_lm_positions"][r, k], ref["masked_lm_labels"][r, k] = p - s, lab
                order.append(slot_of[(b, p)])
                k += 1
    return ref, order
