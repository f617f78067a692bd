"""Fixtures for the trainer tests: tiny synthetic HDF5 shards (docs/hdf5_format.md's schema) and vocab."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.synthetic_shards import write_shard, write_vocab

VOCAB_SIZE = 200
SEQ_LEN = 32
MAX_PRED = 5


def make_shard_dir(root: Path, sizes, test_sizes=(64,), seq_len=SEQ_LEN, max_pred=MAX_PRED,
                   vocab_size=VOCAB_SIZE, lang="xx") -> Path:
    """root/hdf5_.../{lang}wiki/{lang}wiki_{training,test}_{i}.hdf5, as the encode stage lays it out."""
    d = root / f"hdf5_lower_case_0_seq_len_{seq_len}_max_pred_{max_pred}" / f"{lang}wiki"
    for i, n in enumerate(sizes):
        write_shard(d / f"{lang}wiki_training_{i}.hdf5", n, seq_len, max_pred, vocab_size, seed=i)
    for i, n in enumerate(test_sizes):
        write_shard(d / f"{lang}wiki_test_{i}.hdf5", n, seq_len, max_pred, vocab_size, seed=1000 + i)
    return d.parent


@pytest.fixture(scope="session")
def tiny_vocab(tmp_path_factory) -> Path:
    """A folder with a 200-token BERT-layout vocab.txt (cased: no tokenizer_config.json)."""
    d = tmp_path_factory.mktemp("vocab")
    write_vocab(d, VOCAB_SIZE)
    return d / "vocab.txt"


@pytest.fixture(scope="session")
def tiny_shards(tmp_path_factory) -> Path:
    """An encode-style output folder: 3 training shards of unequal size + 1 test shard."""
    return make_shard_dir(tmp_path_factory.mktemp("hdf5"), sizes=(160, 96, 128), test_sizes=(64,))


@pytest.fixture(scope="session")
def tiny_bert_config(tmp_path_factory) -> Path:
    """A 2-layer, hidden-32 BERT config matching the tiny vocab."""
    path = tmp_path_factory.mktemp("cfg") / "bert_tiny_test.json"
    path.write_text(json.dumps({
        "vocab_size": VOCAB_SIZE, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,
        "type_vocab_size": 2, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    }))
    return path


@pytest.fixture(scope="session")
def modern_config(tmp_path_factory) -> Path:
    """A 3-layer, hidden-32 ModernBERT config (two local layers of 16-token windows, one global)
    matching the tiny vocab, with positions for rows of up to 256."""
    path = tmp_path_factory.mktemp("mcfg") / "modernbert_test.json"
    path.write_text(json.dumps({
        "vocab_size": VOCAB_SIZE, "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 2,
        "intermediate_size": 48, "max_position_embeddings": 256, "global_attn_every_n_layers": 3,
        "local_attention": 16}))
    return path


@pytest.fixture
def one_thread():
    """Tiny models run fastest on one intra-op thread: their ops are too small to gain from
    more, and extra OpenMP threads spin against the other processes sharing the cores (ranks,
    parallel test runs). Restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
