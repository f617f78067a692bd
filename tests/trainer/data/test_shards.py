"""read_shard (trainer/data/shards.py): the contract's datasets, and the optional ones when
asked, all of them or by name (the loader asks for doc_starts of packed layout 2)."""
from __future__ import annotations

import numpy as np

from tests.helpers.synthetic_shards import make_samples, write_shard
from trainer.data.shards import read_shard


def test_optional_datasets_when_asked_by_name_or_all(tmp_path):
    s = make_samples(6, 16, 3, 200, seed=1)
    s["word_starts"] = np.ones((6, 16), np.int8)
    s["doc_starts"] = np.zeros((6, 16), np.int8)
    s["doc_starts"][:, 0] = 1
    both = write_shard(tmp_path / "a_training_0.hdf5", 6, samples=s)
    plain = write_shard(tmp_path / "b_training_0.hdf5", 6, seq_len=16, max_pred=3)
    rows = np.array([4, 1])
    assert "doc_starts" not in read_shard(both, rows) and "word_starts" not in read_shard(both, rows)
    got = read_shard(both, rows, optional=("doc_starts",))
    assert "word_starts" not in got and (got["doc_starts"] == s["doc_starts"][rows]).all()
    assert {"doc_starts", "word_starts"} <= set(read_shard(both, rows, optional=True))
    assert (read_shard(both, rows)["input_ids"] == s["input_ids"][rows]).all()
    assert "doc_starts" not in read_shard(plain, rows, optional=("doc_starts",))   # not there: not given
