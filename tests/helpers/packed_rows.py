"""Reading packed rows of layout 2 back (pipeline/encoding/packing.py): the masks undone, the
stream rebuilt from the rows in order, and the layout's rules checked on the way."""
from __future__ import annotations

import numpy as np


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
