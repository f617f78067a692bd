"""Tiny models of every family and packed batches of long rows, for the tests and the bench of
attention within documents; the peak memory of one step, measured in a process of its own.

    family, config = tiny_config("modernbert", max_positions=2048, dropout=False)
    model = family.build(config, unpad=True, nsp=False)
    batch = packed_batch(seq_len=2048, rows=4, unpad=True)     # the loader's batch, within documents
    measure_step("bert", 2048, rows=4, mode="train", unpad=True)   # {"growth_mb": ..., "seconds": ...}

    python -m tests.helpers.doc_attention bert 2048 4 train within   # what measure_step runs

    info = layout(ROWS, 100)                 # segments of these lengths in rows of 100
    dense_reference(q, k, v, info, window)   # attention with the full [T, T] mask
    packed_dir(tmp_path, 256)                # an encode-style folder of packed rows
"""
from __future__ import annotations

import json
import subprocess
import sys

import torch
import torch.nn.functional as F

from tests.helpers.packed_rows import counting_documents, mask_rows, pack_documents, write_packed_shard
from trainer.data.unpadding import host_unpadded

SHAPES = {"distilbert": dict(dim=32, n_layers=3, n_heads=2, hidden_dim=48)}
SHAPE = dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=48)
FAMILY_KEYS = {   # what each family needs beyond the shape: ModernBERT's local and global layers
    "bert": dict(type_vocab_size=2),
    "modernbert": dict(global_attn_every_n_layers=3, local_attention=8),
    "roberta": dict(pad_token_id=1),
    "xlm-roberta": dict(pad_token_id=1),
    "distilbert": {},
}
NO_DROPOUT = {
    "bert": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
    "modernbert": dict(embedding_dropout=0.0, mlp_dropout=0.0, attention_dropout=0.0),
    "roberta": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
    "xlm-roberta": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
    "distilbert": dict(dropout=0.0, attention_dropout=0.0),
}


def layout(lengths_per_row: list[list[int]], L: int):
    """A batch whose rows hold segments of these lengths (doc_starts at each), then padding."""
    mask = torch.zeros(len(lengths_per_row), L, dtype=torch.long)
    starts = torch.zeros_like(mask)
    for r, lengths in enumerate(lengths_per_row):
        at = 0
        for n in lengths:
            starts[r, at] = 1
            at += n
        mask[r, :at] = 1
    return host_unpadded(mask, starts)


def dense_reference(q, k, v, info, window):
    """Attention over all T tokens with the full [T, T] mask: same segment, |q - k| <= window."""
    cu = info.cu_seqlens.long()
    segment = torch.repeat_interleave(torch.arange(len(cu) - 1), torch.diff(cu))
    allowed = segment[:, None] == segment[None, :]
    if window is not None:
        allowed &= (info.positions[:, None] - info.positions[None, :]).abs() <= window
    out = F.scaled_dot_product_attention(*(t.transpose(0, 1) for t in (q, k, v)), attn_mask=allowed)
    return out.transpose(0, 1)


# segments (test_varlen.py, test_cuda.py): one of a single token, some shorter than any window,
# some cut into many blocks; a row ending in padding; a group of short and a group of long ones
ROWS = [[1, 5, 90, 4], [100], [3, 37, 2, 20]]


def packed_dir(root, seq_len: int, marks: bool = True, docs: int = 80):
    """An encode-style folder of packed rows (the second layout, or the first without marks)."""
    d = root / f"hdf5_lower_case_0_seq_len_{seq_len}_max_pred_20_packed" / "xxwiki"
    all_docs = counting_documents(docs, (3, 3 * seq_len // 2), seed=0)
    write_packed_shard(d / "xxwiki_training_0.hdf5", all_docs[:docs // 2], seq_len, 20, 0, marks)
    write_packed_shard(d / "xxwiki_training_1.hdf5", all_docs[docs // 2:-8], seq_len, 20, 1, marks)
    write_packed_shard(d / "xxwiki_test_0.hdf5", all_docs[-8:], seq_len, 20, 2, marks)
    return d.parent


def tiny_config(name: str, max_positions: int, dropout: bool = True, vocab_size: int = 200, **extra):
    """(the family, a tiny config of it: 3 layers of width 32, ModernBERT's two local and one
    global); `dropout` False: none anywhere (the family's defaults otherwise)."""
    from trainer.models import get_family

    family = get_family(name)
    keys = {"vocab_size": vocab_size, "max_position_embeddings": max_positions + 2,
            **SHAPES.get(name, SHAPE), **FAMILY_KEYS[name], **({} if dropout else NO_DROPOUT[name]),
            **extra}
    return family, family.read_config(keys, "tiny")


def packed_batch(seq_len: int, rows: int, unpad: bool, within: bool = True, seed: int = 0,
                 lengths: tuple[int, int] | None = None, vocab_size: int = 200):
    """`rows` packed rows of `seq_len` (documents of seq_len/4 to 2 seq_len tokens unless
    `lengths`; 15% static masks) as the loader batches them: with the layout when `unpad`, a
    segment a document when `within`."""
    from trainer.data.loader import to_batch

    lengths = lengths or (max(3, seq_len // 4), 2 * seq_len)
    docs, out = [], None
    while out is None or len(out["input_ids"]) < rows:
        docs += counting_documents(rows + 1, lengths, seed + len(docs), vocab_size)
        out = pack_documents(docs, seq_len)
    out = mask_rows({k: v[:rows] for k, v in out.items()}, max_pred=max(1, seq_len * 3 // 20),
                    seed=seed)
    return to_batch(out, unpad=unpad, within=within)


def one_step(name: str, seq_len: int, rows: int, mode: str, unpad: bool) -> dict:
    """The growth of this process's peak RSS over one training step (forward + backward) or one
    forward, from after the model and batch exist."""
    import resource
    import time

    import torch

    torch.set_num_threads(1)
    family, config = tiny_config(name, seq_len, local_attention=128) if name == "modernbert" else \
        tiny_config(name, seq_len)
    model = family.build(config, unpad=unpad, nsp=False).train(mode == "train")
    batch = packed_batch(seq_len, rows, unpad)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if mode == "train":
        model(**batch).loss.backward()
    else:
        with torch.no_grad():
            model(**batch)
    seconds = time.perf_counter() - start
    return {"growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
            "seconds": seconds}


def measure_step(name: str, seq_len: int, rows: int, mode: str, unpad: bool) -> dict:
    """one_step in a fresh process (so the peak is this step's alone)."""
    from tests.helpers.trainer_cli import ROOT, env

    cmd = [sys.executable, "-m", "tests.helpers.doc_attention", name, str(seq_len), str(rows), mode,
           "within" if unpad else "padded"]
    res = subprocess.run(cmd, env=env(), cwd=ROOT, capture_output=True, text=True, timeout=600)
    if res.returncode:
        raise RuntimeError(res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    name, seq_len, rows, mode, path = sys.argv[1:6]
    print(json.dumps(one_step(name, int(seq_len), int(rows), mode, path == "within")))
