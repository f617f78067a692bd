"""Small synthetic HDF5 shards in the encode stage's format, for tests and benchmarks only.

The token stream is learnable (each sentence counts upwards from a random start), so a tiny
model's loss falls within a few steps; masking follows BERT's 15% / max_pred rule. Dataset
names and dtypes come from the HDF5 contract (pipeline/encoding/hdf5_format.py), token ids
from the BERT vocab layout (vocab/kinds/wordpiece.py).

    write_shard("x_training_0.hdf5", num_samples=256, seq_len=32, max_pred=5, vocab_size=200, seed=0)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.encoding.hdf5_format import DATASETS
from vocab.core.layout import bert_specials

SPECIALS = bert_specials()  # [PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK]
FIRST_PIECE = len(SPECIALS)  # the first ordinary word piece
CLS, SEP, MASK = (SPECIALS.index(t) for t in ("[CLS]", "[SEP]", "[MASK]"))


def write_vocab(folder: str | Path, vocab_size: int) -> Path:
    """A BERT-layout vocab.txt of `vocab_size` tokens (pieces named w0, w1, ...)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokens = SPECIALS + [f"w{i}" for i in range(vocab_size - len(SPECIALS))]
    path = folder / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


def _zeros(key: str, num_samples: int, seq_len: int, max_pred: int) -> np.ndarray:
    dtype, width = DATASETS[key]
    shape = (num_samples,) if width is None else (num_samples, {"L": seq_len, "P": max_pred}[width])
    return np.zeros(shape, dtype)


def make_samples(num_samples: int, seq_len: int, max_pred: int, vocab_size: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n_pieces = vocab_size - FIRST_PIECE
    ids, mask, seg, pos, mids = (_zeros(k, num_samples, seq_len, max_pred) for k in (
        "input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids"))
    nsp = rng.integers(0, 2, num_samples).astype(DATASETS["next_sentence_labels"][0])
    for i in range(num_samples):
        length = int(rng.integers(max(8, seq_len // 2), seq_len + 1))
        la = (length - 3) // 2
        lb = length - 3 - la
        a0 = int(rng.integers(n_pieces))
        b0 = a0 + la if not nsp[i] else int(rng.integers(n_pieces))
        a = FIRST_PIECE + (a0 + np.arange(la)) % n_pieces
        b = FIRST_PIECE + (b0 + np.arange(lb)) % n_pieces
        row = np.concatenate([[CLS], a, [SEP], b, [SEP]])
        ids[i, :length] = row
        mask[i, :length] = 1
        seg[i, la + 2:length] = 1
        cand = np.array([j for j in range(length) if row[j] not in (CLS, SEP)])
        k = min(max_pred, max(1, round(0.15 * len(cand))))
        chosen = np.sort(rng.choice(cand, k, replace=False))
        pos[i, :k] = chosen
        mids[i, :k] = row[chosen]
        ids[i, chosen] = MASK
    return {"input_ids": ids, "input_mask": mask, "segment_ids": seg,
            "masked_lm_positions": pos, "masked_lm_ids": mids, "next_sentence_labels": nsp}


def write_shard(path: str | Path, num_samples: int, seq_len: int = 32, max_pred: int = 5,
                vocab_size: int = 200, seed: int = 0, samples: dict | None = None) -> Path:
    """Write one gzip-compressed shard as the encode stage does."""
    import h5py

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if samples is None:
        samples = make_samples(num_samples, seq_len, max_pred, vocab_size, seed)
    with h5py.File(path, "w") as fh:
        for key, arr in samples.items():
            fh.create_dataset(key, data=arr, compression="gzip", compression_opts=4)
    return path
