"""Packed rows (RoBERTa's FULL-SENTENCES, as Cramming and ModernBERT train): no pairs, no padding.

Usage:
    corpus = Corpus.from_file(shard, wordpiece)                  # pipeline/encoding/instances.py
    plan = plan_packed(corpus, max_seq=128, dupe_factor=1, seed=42)
    for rows in plan.batches(4096):
        batch = pack_batch(corpus, plan, rows, masker, rng)      # the HDF5 contract's arrays

Each pass (`dupe_factor` of them) takes the shard's documents in a new random order and lays
them out as one token stream, every document followed by a `[SEP]`:

    doc1 sent1 sent2 ... [SEP] doc2 sent1 ... [SEP] doc3 ...

The passes follow each other in the same stream, which is cut into rows of `[CLS]` + the next
`max_seq - 1` stream tokens, so every row is full but the shard's last one (padded with the vocabulary's pad id) and
a sentence may go on in the next row. Rows are written in stream order: reading the rows of a
pass one after the other gives its documents' sentences in order, each exactly once. Segment
ids and next-sentence labels are 0; the static masks are drawn as for pairs
(pipeline/encoding/masking.py) over the non-special tokens, so NVIDIA's readers read the file.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SEP_SOURCE = -1     # a stream slot that holds the document separator, not a corpus token


@dataclass
class PackedPlan:
    """The token stream of all passes, as indices into Corpus.tokens (SEP_SOURCE for [SEP])."""

    source: np.ndarray   # int64 [T]
    max_seq: int

    @property
    def row_tokens(self) -> int:
        return self.max_seq - 1          # [CLS] + the stream's next tokens

    def __len__(self) -> int:
        return -(-len(self.source) // self.row_tokens)

    def batches(self, batch_rows: int):
        for start in range(0, len(self), batch_rows):
            yield range(start, min(len(self), start + batch_rows))


def plan_packed(corpus, max_seq: int, dupe_factor: int, seed: int) -> PackedPlan:
    """The stream of `dupe_factor` passes over the shuffled documents (see module doc)."""
    rng = np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32, 3])
    tok_bounds = corpus.sent_bounds[corpus.doc_bounds]          # document d: tokens [b[d], b[d+1])
    starts, ends = tok_bounds[:-1], tok_bounds[1:]
    parts = []
    for _ in range(dupe_factor):
        order = rng.permutation(corpus.n_docs)
        lengths = ends[order] - starts[order] + 1                 # + its [SEP]
        offsets = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # slot j of document i holds token starts[i] + j; its last slot the separator
        src = np.arange(offsets[-1], dtype=np.int64)
        src += np.repeat(starts[order] - offsets[:-1], lengths)
        src[offsets[1:] - 1] = SEP_SOURCE
        parts.append(src)
    source = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    if len(source) % (max_seq - 1) == 1:   # the last document's [SEP] alone in a row: drop it
        source = source[:-1]
    return PackedPlan(source=source, max_seq=max_seq)


def pack_batch(corpus, plan: PackedPlan, rows: range, masker, rng: np.random.Generator) -> dict:
    """The HDF5 arrays of `rows` (consecutive rows of the plan), statically masked."""
    L, W = plan.max_seq, plan.row_tokens
    B = len(rows)
    flat = np.arange(rows.start * W, rows.stop * W, dtype=np.int64)
    real = flat < len(plan.source)
    src = np.where(real, plan.source[np.minimum(flat, len(plan.source) - 1)], 0).reshape(B, W)
    real = real.reshape(B, W)
    is_sep = (src == SEP_SOURCE) & real
    ids = np.zeros((B, L), dtype=np.int32)
    ids[:, 0] = masker.cls_id
    body = corpus.tokens[np.maximum(src, 0)]
    body[is_sep] = masker.sep_id
    body[~real] = masker.pad_id              # the vocabulary's pad id (XLM-R: 1)
    ids[:, 1:] = body
    cand = np.zeros((B, L), dtype=bool)
    cand[:, 1:] = real & ~is_sep
    input_mask = np.zeros((B, L), dtype=np.int8)
    input_mask[:, 0] = 1
    input_mask[:, 1:] = real
    starts = None
    if corpus.word_starts is not None:
        starts = np.ones((B, L), dtype=bool)            # [CLS], [SEP] are words of their own
        starts[:, 1:] = corpus.word_starts[np.maximum(src, 0)] | is_sep
        starts[:, 1] |= True                            # a row's first token starts a word
        starts &= input_mask.astype(bool)
    out = masker.mask_rows(ids, cand, rng, starts=None if starts is None else starts & cand)
    out["input_mask"] = input_mask
    out["segment_ids"] = np.zeros((B, L), dtype=np.int8)
    out["next_sentence_labels"] = np.zeros(B, dtype=np.int8)
    if starts is not None:
        out["word_starts"] = starts.view(np.int8)
    return out

