"""The rows of an HDF5 file of the contract (pipeline/encoding/hdf5_format.py) as unmasked token
rows for other trainers: the original ids restored from the static masks (masked_lm_positions
and masked_lm_ids, by the contract's label rule: the trainer's dynamic masking restores them the
same way), padding cut off, a block of rows at a time.

Every layout of packed rows reads alike (the contract's datasets); a `doc_starts` dataset, where
a file has one (packed layout 2), is carried along as a column, never required.

Usage:
    for block in token_blocks(path, special_ids={101, 102, 0}, rows=4096):
        block["offsets"], block["input_ids"], block["special_tokens_mask"], block["len"]
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .hdf5_format import HDF5FormatError, check_file, masked_lm_labels

DOC_STARTS = "doc_starts"   # packed layout 2's document starts: carried where present


def restore_ids(input_ids: np.ndarray, positions: np.ndarray, masked_ids: np.ndarray) -> np.ndarray:
    """The original ids of masked rows: masked_lm_ids put back at their positions, up to the
    first 0 of masked_lm_positions (NVIDIA's rule, hdf5_format.masked_lm_labels)."""
    ids = np.array(input_ids, dtype=np.int32, copy=True)
    labels = masked_lm_labels(positions, masked_ids)
    rows, cols = np.nonzero(labels >= 0)
    pos = positions[rows, cols].astype(np.int64)
    if len(pos) and (pos.max() >= ids.shape[1] or pos.min() < 0):
        raise HDF5FormatError(f"a masked position lies outside the row of {ids.shape[1]} tokens")
    ids[rows, pos] = labels[rows, cols]
    return ids


def token_blocks(path: Path, special_ids, rows: int = 4096) -> Iterator[dict]:
    """Blocks of at most `rows` rows of `path`, padding cut off, each a dict of flat arrays
    (the rows one after the other) and `offsets` (int32 [n + 1]: row i is [offsets[i],
    offsets[i + 1])): input_ids (restored, int32), attention_mask (int8, all 1),
    special_tokens_mask (int8, 1 at the tokenizer's special ids), doc_starts (int8) where the
    file has it; and `len` (int32 [n])."""
    import h5py

    shape = check_file(path)
    special = np.asarray(sorted(special_ids), dtype=np.int64)
    with h5py.File(path, "r") as fh:
        carry = DOC_STARTS in fh
        for start in range(0, shape.num_samples, rows):
            sl = slice(start, min(shape.num_samples, start + rows))
            ids = restore_ids(fh["input_ids"][sl], fh["masked_lm_positions"][sl], fh["masked_lm_ids"][sl])
            real = fh["input_mask"][sl].astype(bool)
            lengths = real.sum(axis=1)
            if not np.array_equal(real, np.arange(shape.seq_len)[None, :] < lengths[:, None]):
                raise HDF5FormatError(f"{path}: input_mask has padding before real tokens; "
                                      "token rows need rows whose padding comes last")
            flat = ids[real]
            offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
            np.cumsum(lengths, out=offsets[1:])
            block = {"offsets": offsets, "input_ids": flat,
                     "attention_mask": np.ones(len(flat), dtype=np.int8),
                     "special_tokens_mask": np.isin(flat, special).astype(np.int8),
                     "len": lengths.astype(np.int32)}
            if carry:
                block[DOC_STARTS] = fh[DOC_STARTS][sl][real].astype(np.int8)
            yield block


def has_doc_starts(path: Path) -> bool:
    """Whether the file carries packed layout 2's `doc_starts` dataset."""
    import h5py

    with h5py.File(path, "r") as fh:
        return DOC_STARTS in fh
