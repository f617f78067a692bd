"""The streaming HDF5 loader: schema checks, the (seed, epoch) order, rank blocks, exact resume."""
from __future__ import annotations

import itertools

import h5py
import numpy as np
import pytest

from tests.helpers.synthetic_shards import make_samples, write_shard
from pipeline.encoding.hdf5_format import masked_lm_labels
from trainer.data import DataError, EpochOrder, ShardedTrainData, eval_batches, find_shards, inspect_shard


def id_shards(root, sizes, seq_len=8, max_pred=2):
    """Training shards whose rows carry a unique id in input_ids[:, 1] (file * 1000 + row)."""
    for f, n in enumerate(sizes):
        s = make_samples(n, seq_len, max_pred, 200, seed=f)
        s["input_ids"][:, 1] = 1000 * f + np.arange(n) + 1
        write_shard(root / f"xx_training_{f}.hdf5", n, samples=s)
    return find_shards(root).train


def ids(batch):
    return batch["input_ids"][:, 1].tolist()


def take(loader, k):
    it = iter(loader)
    out = [ids(next(it)) for _ in range(k)]
    loader.close()
    return out


def test_find_shards_splits_training_and_test(tiny_shards):
    shards = find_shards(tiny_shards)
    assert [s.path.name for s in shards.train] == [f"xxwiki_training_{i}.hdf5" for i in range(3)]
    assert [s.path.name for s in shards.test] == ["xxwiki_test_0.hdf5"]
    assert (shards.seq_len, shards.max_pred) == (32, 5)


def test_empty_input_dir_is_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="no \\*training\\*.hdf5"):
        find_shards(tmp_path)
    with pytest.raises(DataError, match="not a directory"):
        find_shards(tmp_path / "nope")


def test_wrong_schema_is_one_clear_error(tmp_path):
    with h5py.File(tmp_path / "a_training_0.hdf5", "w") as fh:
        fh["input_ids"] = np.zeros((4, 8), np.int32)
    with pytest.raises(DataError, match="wrong schema, it lacks .*masked_lm_ids"):
        inspect_shard(tmp_path / "a_training_0.hdf5")
    (tmp_path / "b_training_0.hdf5").write_text("not hdf5")
    with pytest.raises(DataError, match="not a readable HDF5"):
        inspect_shard(tmp_path / "b_training_0.hdf5")
    s = make_samples(4, 8, 2, 200, 0)
    s["masked_lm_ids"] = s["masked_lm_ids"][:, :1]
    write_shard(tmp_path / "c_training_0.hdf5", 4, samples=s)
    with pytest.raises(DataError, match="inconsistent shapes") as err:
        inspect_shard(tmp_path / "c_training_0.hdf5")
    # the contract's message (pipeline/encoding/hdf5_format.py) plus what to do about it
    assert str(err.value).endswith("; make shards with `pipeline encode` (NVIDIA's HDF5 format, "
                                   "see docs/hdf5_format.md)")


def test_labels_stop_at_first_zero_position():
    pos = np.array([[3, 7, 0, 0], [1, 2, 5, 9]])
    mids = np.array([[11, 12, 0, 13], [4, 5, 6, 7]])
    assert masked_lm_labels(pos, mids).tolist() == [[11, 12, -1, -1], [4, 5, 6, 7]]


def test_batches_are_int64_with_contract_keys(tiny_shards):
    data = ShardedTrainData(find_shards(tiny_shards).train, 4, seed=1, rank=0, world_size=1)
    batch = next(iter(data))
    data.close()
    assert set(batch) == {"input_ids", "segment_ids", "input_mask", "masked_lm_positions",
                          "masked_lm_labels", "next_sentence_labels"}
    assert all(str(v.dtype) == "torch.int64" for v in batch.values())
    assert batch["input_ids"].shape == (4, 32) and batch["masked_lm_labels"].shape == (4, 5)
    assert batch["next_sentence_labels"].shape == (4,)


def test_pin_memory_pins_every_tensor_and_changes_no_value(tiny_shards, monkeypatch):
    """Page-locked batches (the trainer asks for them on CUDA only: pinning needs a GPU, so
    here Tensor.pin_memory is replaced by a recorder); without the option nothing is pinned."""
    import torch

    pinned = []

    def record(tensor):
        pinned.append(tensor)
        return tensor.clone()

    monkeypatch.setattr(torch.Tensor, "pin_memory", record)
    shards = find_shards(tiny_shards).train
    batches = {}
    for pin in (False, True):
        data = ShardedTrainData(shards, 4, seed=1, rank=0, world_size=1, pin_memory=pin)
        it = iter(data)
        batches[pin] = [next(it) for _ in range(3)]
        data.close()
        # the background thread pins the batches it assembles ahead of the consumer too
        assert (len(pinned) >= 3 * 6 and len(pinned) % 6 == 0) if pin else not pinned
    for plain, pin in zip(batches[False], batches[True]):
        assert all(torch.equal(plain[k], pin[k]) for k in plain)


@pytest.mark.parametrize("sizes", [(10,), (7, 13, 5), (1, 30, 2, 9)])
def test_epoch_order_is_world_size_independent_and_blocks_are_disjoint(sizes):
    for world in (1, 2, 3):
        order = EpochOrder(sizes, seed=5, world_size=world)
        seen = []
        for r in range(world):
            pieces = order.pieces(r, epoch=3)
            n = sum(p.stop - p.start for p in pieces)
            assert n == sum(sizes) // world  # every rank: the same number of samples
            seen += [(p.file, int(i)) for p in pieces
                     for i in order.sample_order(3, p.file)[p.start:p.stop]]
        assert len(set(seen)) == len(seen)  # disjoint
        if world == 1:
            full = seen
        assert seen == full[:len(seen)]  # the blocks cut one world-independent sequence
    # a pure function of (seed, epoch): same again, different for another epoch or seed
    a, b = EpochOrder(sizes, 5, 1), EpochOrder(sizes, 5, 1)
    assert [a.sample_order(1, f).tolist() for f in range(len(sizes))] == \
           [b.sample_order(1, f).tolist() for f in range(len(sizes))]
    if sum(sizes) > 10:
        assert a.pieces(0, 1) != a.pieces(0, 2) or any(
            (a.sample_order(1, f) != a.sample_order(2, f)).any() for f in range(len(sizes)))


@pytest.mark.parametrize("sizes,world,batch", [((10,), 1, 3), ((7, 13, 5), 2, 4), ((1, 30, 2, 9), 3, 5)])
def test_resume_grid_yields_the_uninterrupted_batches(tmp_path, sizes, world, batch):
    shards = id_shards(tmp_path, sizes)
    per_rank = sum(sizes) // world
    steps = 3 * per_rank // batch + 2  # crosses several epoch boundaries
    for rank in range(world):
        straight = take(ShardedTrainData(shards, batch, 7, rank, world), steps)
        for k in sorted({1, per_rank // batch, per_rank // batch + 1, steps - 2}):
            first = ShardedTrainData(shards, batch, 7, rank, world)
            assert take(first, k) == straight[:k]
            resumed = ShardedTrainData(shards, batch, 7, rank, world)
            resumed.load_state_dict(first.state_dict())
            assert take(resumed, steps - k) == straight[k:], (rank, k)
    # each epoch, the ranks together see every sample at most once, each rank per_rank of them
    blocks = [sum(take(ShardedTrainData(shards, 1, 7, r, world), per_rank), []) for r in range(world)]
    flat = list(itertools.chain(*blocks))
    assert len(flat) == len(set(flat)) == per_rank * world


def test_world_size_change_refused_mid_epoch_allowed_at_boundary(tmp_path):
    shards = id_shards(tmp_path, (12, 8))
    two = ShardedTrainData(shards, 2, 3, 0, 2)
    take(two, 3)  # 6 of 10 samples of epoch 0
    one = ShardedTrainData(shards, 2, 3, 0, 1)
    with pytest.raises(DataError, match="middle of epoch 0.*resume with 2 ranks"):
        one.load_state_dict(two.state_dict())
    take(two, 2)  # now exactly one epoch (10 per rank)
    one.load_state_dict(two.state_dict())
    assert one.epoch == 1
    ref = ShardedTrainData(shards, 2, 3, 0, 1)
    assert take(one, 3) == take(ref, 13)[10:]


def test_changed_data_or_seed_refused(tmp_path):
    shards = id_shards(tmp_path, (12, 8))
    state = ShardedTrainData(shards, 2, 3, 0, 1).state_dict()
    with pytest.raises(DataError, match="changed since the checkpoint"):
        ShardedTrainData(shards, 2, 4, 0, 1).load_state_dict(state)
    with pytest.raises(DataError, match="changed since the checkpoint"):
        ShardedTrainData(shards[:1], 2, 3, 0, 1).load_state_dict(state)


def test_ids_beyond_vocab_size_are_one_clear_error(tiny_shards):
    data = ShardedTrainData(find_shards(tiny_shards).train, 4, 1, 0, 1, vocab_size=150)
    with pytest.raises(DataError, match="token id .* >= the model's vocab_size 150"):
        next(iter(data))
    data.close()


def test_too_few_samples_for_the_ranks(tmp_path):
    shards = id_shards(tmp_path, (2,))
    with pytest.raises(DataError, match="cannot feed 3 ranks"):
        ShardedTrainData(shards, 1, 0, 0, 3)


def test_eval_batches_split_across_ranks(tmp_path):
    shards = id_shards(tmp_path, (5, 6))
    whole = sum((ids(b) for b in eval_batches(shards, 4, 0, 1)), [])
    assert len(whole) == 11
    parts = [sum((ids(b) for b in eval_batches(shards, 4, r, 2)), []) for r in range(2)]
    assert parts[0] + parts[1] == whole
    capped = sum((ids(b) for b in eval_batches(shards, 4, 0, 1, max_samples=7)), [])
    assert capped == whole[:7]


def test_prefetch_keeps_at_most_depth_batches_and_one_piece_ahead(tmp_path):
    import time

    shards = id_shards(tmp_path, (4,) * 8)
    data = ShardedTrainData(shards, 4, 0, 0, 1, depth=2)  # one file = one batch
    loads = []
    real_load = data._load
    data._load = lambda piece: loads.append(piece.file) or real_load(piece)
    it = iter(data)
    for k in range(1, 4):
        next(it)
        time.sleep(0.2)  # give the threads every chance to run ahead
        # k batches handed out, `depth` waiting in the queue, one assembled and waiting for
        # room, and the next piece loading: never more
        assert len(loads) == k + data.depth + 2
    data.close()


def test_loader_memory_is_bounded_by_about_two_shards(tmp_path):
    """Peak Python-heap memory (numpy arrays are traced) while streaming six shards in batches
    that straddle shard boundaries: the current piece, the next one loading, and a few
    finished batches (their size does not grow with the shards)."""
    import tracemalloc

    import torch  # noqa: F401  (imported before tracing: to_batch imports it lazily)

    n, seq_len, max_pred = 1000, 128, 20
    for i in range(6):
        write_shard(tmp_path / f"m_training_{i}.hdf5", n, seq_len, max_pred, 3000, seed=i)
    shards = find_shards(tmp_path).train
    shard_bytes = n * (seq_len * (4 + 1 + 1) + max_pred * (4 + 4) + 1)  # int32/int8 as stored
    data = ShardedTrainData(shards, 96, 0, 0, 1)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        it = iter(data)
        for _ in range(6 * n // 96):
            next(it)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
        data.close()
    # measured 2.3 shards (the current piece + the next being read, one dataset of it twice),
    # plus the finished batches (int64) the background thread keeps ahead: at most depth + 2
    batch_bytes = 96 * (3 * seq_len + 2 * max_pred + 1) * 8
    bound = 2.75 * shard_bytes + (data.depth + 2) * batch_bytes
    assert peak < bound, f"peak {peak / shard_bytes:.2f} shards, bound {bound / shard_bytes:.2f}"
