"""A task only the long context solves, for the context evaluation's tests (trainer/evaluation/context.py):
each document starts with its *key* (a piece of KEYS, which appear nowhere else) and goes on with
filler pieces; deep inside (from token FAR on), a tenth of the tokens are the key again, and those
are exactly the masked ones ([MASK] in the rows). A masked token is then known from the key at the
document's start, thousands of tokens away, and from nothing nearer.

    docs = far_key_documents(12, length=(1200, 2000), seed=0)
    write_far_key_shard(path, docs, seq_len=2048, max_pred=300)   # packed layout 2, masks at the copies
    model = KeyReader()     # a "model" that predicts, at every masked slot, the key its row holds
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from tests.helpers.packed_rows import mask_rows, pack_documents, write_rows
from tests.helpers.synthetic_shards import FIRST_PIECE
from trainer.models.output import PretrainingOutput

KEYS = range(180, 200)          # the keys: the last 20 pieces of the tests' 200-piece vocab
FILLER = (FIRST_PIECE, 180)     # the filler pieces
FAR = 600                       # no key copy before this token of a document


def far_key_documents(n: int, length: tuple[int, int], seed: int, far: int = FAR) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n):
        size, key = int(rng.integers(length[0], length[1] + 1)), int(rng.choice(KEYS))
        doc = rng.integers(*FILLER, size=size)
        doc[0] = key
        copies = np.flatnonzero(rng.random(size) < 0.1)
        doc[copies[copies >= far]] = key
        docs.append(doc.tolist())
    return docs


def write_far_key_shard(path, docs: list[list[int]], seq_len: int, max_pred: int) -> Path:
    """One HDF5 file of packed rows (layout 2) whose static masks are the keys' copies (a key
    at a segment's first token after [CLS] stays visible; at most max_pred a row)."""
    rows = pack_documents(docs, seq_len)
    chosen = []
    for ids, starts in zip(rows["input_ids"], rows["doc_starts"]):
        keys = np.flatnonzero(np.isin(ids, KEYS) & (starts == 0))
        chosen.append(keys[~np.isin(keys - 1, np.flatnonzero(starts))][:max_pred])
    return write_rows(path, mask_rows(rows, max_pred, None, positions=chosen))


class KeyReader(torch.nn.Module):
    """Weights by hand, for the measure's own test: at every masked slot, the logits say the
    largest key its row holds (a filler piece where the row holds none)."""

    def forward(self, input_ids, input_mask, masked_lm_positions, masked_lm_labels=None, **_):
        keyed = torch.where(torch.isin(input_ids, torch.tensor(list(KEYS))) & input_mask.bool(), input_ids, -1)
        guess = keyed.max(1).values.clamp_min(FILLER[0])
        slots = guess[:, None].expand_as(masked_lm_positions).reshape(-1)
        logits = torch.nn.functional.one_hot(slots, 200).float() * 10
        labels = masked_lm_labels.reshape(-1)
        labels = torch.where(labels >= 0, labels, -100)
        loss = torch.nn.functional.cross_entropy(logits, labels, ignore_index=-100)
        return PretrainingOutput(loss, loss, None, logits, labels, None)
