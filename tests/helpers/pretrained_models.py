"""Tiny transformers models of every family, built and saved here (random weights, offline), each
with its own tokenizer trained here (tests/helpers/hf_tokenizers.py), and HDF5 data encoded with
such a tokenizer: what `--init_from` starts from in the tests.

    tok = tokenizer_folder(root, "unigram")                    # an XLM-R-style tokenizer folder
    model_dir = save_model(root / "xlmr", "XLMRobertaForMaskedLM", tok)
    hdf5 = write_tokenized_shards(root / "data", tok)          # pairs, padded with its pad id
    ids, mask = sample_batch(tok)                              # a padded batch of real text

The shards follow the HDF5 contract (pipeline/encoding/hdf5_format.py) as `pipeline encode
--tokenizer` writes them: `[CLS] A [SEP] B [SEP]` in the tokenizer's own special tokens, padded
with its pad id, 15% static masks, the encode manifest's record of the tokenizer (and the files'
tokenizer_fingerprint attribute for a transformers tokenizer).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from tests.helpers.encode_testdata import make_documents

# transformers class -> (tokenizer kind, the config's keys besides the tokenizer's)
TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=40, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
MODELS = {
    "BertForPreTraining": ("wordpiece", "BertConfig", TINY),
    "BertForMaskedLM": ("wordpiece", "BertConfig", TINY),
    "BertModel": ("wordpiece", "BertConfig", TINY),
    "RobertaForMaskedLM": ("bpe", "RobertaConfig", TINY),
    "XLMRobertaForMaskedLM": ("unigram", "XLMRobertaConfig", TINY),
    "XLMRobertaModel": ("unigram", "XLMRobertaConfig", TINY),
    "DistilBertForMaskedLM": ("wordpiece", "DistilBertConfig",
                              dict(dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=40,
                                   dropout=0.0, attention_dropout=0.0)),
    "ModernBertForMaskedLM": ("bpe", "ModernBertConfig",
                              dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                                   intermediate_size=48, max_position_embeddings=64,
                                   global_attn_every_n_layers=3, local_attention=16)),
}


def sentences(n_docs: int = 60, seed: int = 0) -> list[list[str]]:
    return make_documents(n_docs, seed=seed, max_sents=8)


def tokenizer_folder(root: Path, kind: str, vocab_size: int = 400, seed: int = 0) -> Path:
    """A transformers tokenizer folder of `kind` (wordpiece, bpe, unigram) trained here."""
    from tests.helpers.hf_tokenizers import BUILDERS

    folder = Path(root) / f"tok_{kind}_{vocab_size}_{seed}"
    if not (folder / "tokenizer.json").is_file():
        texts = [s for doc in sentences(seed=seed) for s in doc]
        BUILDERS[kind](folder, texts, vocab_size=vocab_size)
    return folder


def save_model(folder: Path, cls_name: str, tok: Path, seed: int = 0) -> Path:
    """`cls_name` with random weights (seeded), its config from the tokenizer (vocab size,
    special ids), saved with save_pretrained beside the tokenizer's files."""
    import torch
    import transformers

    from vocab.kinds import load_tokenizer

    spec = load_tokenizer(tok)
    _, config_name, keys = MODELS[cls_name]
    ids = dict(pad_token_id=spec.pad_id, bos_token_id=spec.cls_id, eos_token_id=spec.sep_id)
    if config_name == "ModernBertConfig":
        ids.update(cls_token_id=spec.cls_id, sep_token_id=spec.sep_id)
    config = getattr(transformers, config_name)(vocab_size=spec.size, **ids, **keys)
    torch.manual_seed(seed)
    model = getattr(transformers, cls_name)(config)
    with torch.no_grad():   # random, not zero: a bias that stays 0 would hide a lost tensor
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0, 0.02)
    model.save_pretrained(folder)
    for f in Path(tok).iterdir():   # the tokenizer's own files (as a hub folder holds them)
        shutil.copyfile(f, Path(folder) / f.name)
    return Path(folder)


def _rows(spec, tok, docs, seq_len, max_pred, rng) -> dict:
    from pipeline.encoding.hdf5_format import DATASETS

    sents = [tok.encode(s, add_special_tokens=False).ids for doc in docs for s in doc]
    n = len(sents) - 1
    ids = np.full((n, seq_len), spec.pad_id, DATASETS["input_ids"][0])
    mask = np.zeros((n, seq_len), DATASETS["input_mask"][0])
    seg = np.zeros((n, seq_len), DATASETS["segment_ids"][0])
    pos = np.zeros((n, max_pred), DATASETS["masked_lm_positions"][0])
    mids = np.zeros((n, max_pred), DATASETS["masked_lm_ids"][0])
    half = (seq_len - 3) // 2
    for i in range(n):
        a, b = sents[i][:half], sents[i + 1][:seq_len - 3 - half]
        row = [spec.cls_id, *a, spec.sep_id, *b, spec.sep_id]
        ids[i, :len(row)] = row
        mask[i, :len(row)] = 1
        seg[i, len(a) + 2:len(row)] = spec.pair_type_id
        cand = [j for j in range(len(row)) if j not in (0, len(a) + 1, len(row) - 1)]
        k = min(max_pred, max(1, round(0.15 * len(cand))))
        chosen = np.sort(rng.choice(cand, k, replace=False))
        pos[i, :k], mids[i, :k] = chosen, ids[i, chosen]
        ids[i, chosen] = spec.mask_id
    return {"input_ids": ids, "input_mask": mask, "segment_ids": seg, "masked_lm_positions": pos,
            "masked_lm_ids": mids, "next_sentence_labels": np.zeros(n, DATASETS["next_sentence_labels"][0])}


def write_tokenized_shards(root: Path, tok: Path, seq_len: int = 32, max_pred: int = 5, seed: int = 0) -> Path:
    """An encode-style folder of two training shards and one test shard of sentence pairs
    encoded with the tokenizer `tok`; its manifest records the tokenizer."""
    import h5py
    from tokenizers import Tokenizer

    from pipeline.encoding.hdf5_format import TOKENIZER_ATTR
    from tests.helpers.synthetic_shards import write_shard
    from vocab.kinds import load_tokenizer
    from vocab.kinds.wordpiece import VocabSpec

    spec = load_tokenizer(tok)
    backend = Tokenizer.from_file(str(Path(tok) / "tokenizer.json"))
    folder = Path(root) / f"hdf5_seq_len_{seq_len}_max_pred_{max_pred}"
    rng = np.random.default_rng(seed)
    docs = sentences(n_docs=40, seed=seed + 100)
    for name, part in (("training_0", docs[0::3]), ("training_1", docs[1::3]), ("test_0", docs[2::3])):
        path = write_shard(folder / "xxwiki" / f"xxwiki_{name}.hdf5", 0,
                           samples=_rows(spec, backend, part, seq_len, max_pred, rng))
        if not isinstance(spec, VocabSpec):
            with h5py.File(path, "a") as fh:
                fh.attrs[TOKENIZER_ATTR] = spec.fingerprint
    (folder / "manifest.json").write_text(json.dumps({
        "stage": "encode", "vocab": str(Path(tok).resolve()),
        "tokenizer": {"folder": str(Path(tok).resolve()), "kind": spec.piece_model,
                      "fingerprint": spec.fingerprint, "size": spec.size, "pad_id": spec.pad_id}}),
        encoding="utf-8")
    return folder


def sample_batch(tok: Path, n: int = 3, seq_len: int = 24, seed: int = 7):
    """(input_ids, attention_mask) [n, seq_len] of real text with the tokenizer's specials,
    padded with its pad id (rows of unequal length)."""
    import torch
    from tokenizers import Tokenizer

    from vocab.kinds import load_tokenizer

    spec = load_tokenizer(tok)
    backend = Tokenizer.from_file(str(Path(tok) / "tokenizer.json"))
    texts = [" ".join(doc) for doc in sentences(n_docs=n, seed=seed)]
    ids = torch.full((n, seq_len), spec.pad_id, dtype=torch.long)
    mask = torch.zeros((n, seq_len), dtype=torch.long)
    for i, text in enumerate(texts):
        row = [spec.cls_id, *backend.encode(text, add_special_tokens=False).ids[: seq_len - 2 - 4 * i],
               spec.sep_id]
        ids[i, :len(row)] = torch.tensor(row)
        mask[i, :len(row)] = 1
    return ids, mask
