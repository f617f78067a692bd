"""The batch's layout (trainer/data/unpadding.py) for packed rows of the second layout, found by
the loader: segments cut at doc_starts (or one a row), positions restarting at each, the groups
for attention without flash; the loader and the eval batches carry doc_starts and the layout;
the loader's state keeps --doc_attention, and a resume with another one is refused."""
from __future__ import annotations

import pytest
import torch

from tests.helpers.packed_rows import (
    counting_documents,
    documents_of_rows,
    mask_rows,
    pack_documents,
    write_packed_shard,
)
from trainer.data import DataError, ShardedTrainData, eval_batches, find_shards
from trainer.data.loader import to_batch
from trainer.data.unpadding import MIN_GROUP_WIDTH, host_unpadded, real_tokens

CLS, SEP = 101, 102


def test_packed_rows_of_the_second_layout():
    """The fixture writer lays documents out as encode --pack does: every row starts with
    [CLS], a document continuing from the row before gets one, doc_starts marks each start."""
    rows = pack_documents([[1, 2, 3], [4] * 9, [5, 6]], seq_len=8)
    assert rows["input_ids"].tolist() == [
        [CLS, 1, 2, 3, SEP, CLS, 4, 4],          # doc 0 whole, doc 1 begins
        [CLS, 4, 4, 4, 4, 4, 4, 4],              # doc 1 continues: a [CLS] of its own
        [CLS, SEP, CLS, 5, 6, SEP, 0, 0]]        # doc 1 ends, doc 2, padding (last row only)
    assert rows["doc_starts"].tolist() == [[1, 0, 0, 0, 0, 1, 0, 0], [1] + [0] * 7,
                                           [1, 0, 1, 0, 0, 0, 0, 0]]
    assert rows["input_mask"].sum(1).tolist() == [8, 8, 6]


def test_the_fixture_rows_follow_the_encoders_layout():
    """Read back by the encode tests' reader, which checks the layout's rules on the way (every
    row starts with [CLS], doc_starts marks exactly the [CLS]s, one document a segment, a row
    continues a document exactly when it had not ended), the rows give the documents."""
    docs = counting_documents(30, (1, 90), seed=3)
    rows = pack_documents(docs, seq_len=32)
    back = documents_of_rows(rows["input_ids"], rows["input_mask"], rows["doc_starts"], CLS, SEP)
    assert back == [tuple(d) for d in docs]


def test_the_layout_of_packed_rows_within_and_across_documents():
    rows = pack_documents([[1, 2, 3], [4] * 9, [5, 6]], seq_len=8)
    mask, starts = (torch.from_numpy(rows[k]).long() for k in ("input_mask", "doc_starts"))
    within = host_unpadded(mask, starts)
    assert within.cu_seqlens.tolist() == [0, 5, 8, 16, 18, 22] and within.cu_seqlens.dtype == torch.int32
    assert within.positions.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, *range(8), 0, 1, 0, 1, 2, 3]
    assert within.indices.tolist() == list(range(22))
    assert (within.batch, within.max_seqlen, within.longest, within.segments) == (3, 8, 8, 5)
    across = host_unpadded(mask)
    assert across.cu_seqlens.tolist() == [0, 8, 16, 22]
    assert across.positions.tolist() == [*range(8), *range(8), *range(6)]
    assert torch.equal(real_tokens(mask, starts).positions, within.positions)


def test_segments_are_grouped_by_length_for_attention_without_flash():
    """Short segments do not pad to the longest: groups up to 64, then within a factor of 2."""
    docs = [[7] * n for n in (3, 300, 5, 70, 1000, 40)]
    rows = pack_documents(docs, seq_len=2048)
    info = host_unpadded(*(torch.from_numpy(rows[k]).long() for k in ("input_mask", "doc_starts")))
    widths = sorted((g.width, g.segments) for g in info.groups)
    assert widths == [(42, 3), (72, 1), (302, 1), (1002, 1)]
    assert widths[0][0] <= MIN_GROUP_WIDTH
    rows_seen = torch.cat([g.rows for g in info.groups]).sort().values
    assert torch.equal(rows_seen, torch.arange(info.indices.numel()))   # every token once


def test_a_batch_carries_doc_starts_and_its_layout():
    rows = mask_rows(pack_documents(counting_documents(6, (3, 40), 0), 32), max_pred=5, seed=0)
    batch = to_batch(rows, unpad=True, within=True)
    assert batch["doc_starts"].dtype == torch.int64 and batch["doc_starts"].shape == batch["input_ids"].shape
    assert batch["unpadded"].segments == int(batch["doc_starts"].sum())
    assert to_batch(rows, unpad=True)["unpadded"].segments == len(rows["input_ids"])


@pytest.fixture
def packed_dir(tmp_path):
    docs = counting_documents(60, (3, 80), seed=0)
    write_packed_shard(tmp_path / "xx_training_0.hdf5", docs[:40], 32, 5, seed=0)
    write_packed_shard(tmp_path / "xx_training_1.hdf5", docs[40:], 32, 5, seed=1)
    write_packed_shard(tmp_path / "xx_test_0.hdf5", docs[:10], 32, 5, seed=2)
    return tmp_path


def test_the_loader_reads_doc_starts_and_finds_the_documents(packed_dir):
    shards = find_shards(packed_dir)
    assert shards.packed and shards.doc_starts
    data = ShardedTrainData(shards.train, 4, seed=0, rank=0, world_size=1, unpad=True,
                            doc_attention="within")
    batch = next(iter(data))
    data.close()
    starts = batch["doc_starts"]
    assert batch["unpadded"].segments == int(starts.sum())
    assert torch.equal(batch["unpadded"].positions, host_unpadded(batch["input_mask"], starts).positions)
    assert data.state_dict()["doc_attention"] == "within"
    ev = next(eval_batches(shards.test, 4, 0, 1, unpad=True, within=True))
    assert ev["unpadded"].segments == int(ev["doc_starts"].sum())
    across = ShardedTrainData(shards.train, 4, seed=0, rank=0, world_size=1, doc_attention="across")
    assert "doc_starts" not in next(iter(across))   # not read when not used
    across.close()


def test_a_resume_with_another_doc_attention_is_refused(packed_dir):
    shards = find_shards(packed_dir).train
    state = ShardedTrainData(shards, 4, 0, 0, 1, doc_attention="within").state_dict()
    with pytest.raises(DataError, match="attention changed since the checkpoint "
                                        r"\(--doc_attention within then, --doc_attention across now\)"):
        ShardedTrainData(shards, 4, 0, 0, 1, doc_attention="across").load_state_dict(state)
    ShardedTrainData(shards, 4, 0, 0, 1, doc_attention="within").load_state_dict(state)
    old = {k: v for k, v in state.items() if k != "doc_attention"}   # before the choice: across
    ShardedTrainData(shards, 4, 0, 0, 1, doc_attention="across").load_state_dict(old)
    with pytest.raises(DataError, match="--doc_attention across then"):
        ShardedTrainData(shards, 4, 0, 0, 1, doc_attention="within").load_state_dict(old)


def test_files_of_the_first_layout_have_no_doc_starts(tmp_path):
    write_packed_shard(tmp_path / "xx_training_0.hdf5", counting_documents(5, (3, 9), 0), 16, 2,
                       seed=0, marks=False)
    shards = find_shards(tmp_path)
    assert shards.packed and not shards.doc_starts
    assert ShardedTrainData(shards.train, 2, 0, 0, 1).optional_datasets() == ()
