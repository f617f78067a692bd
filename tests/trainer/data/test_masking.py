"""Dynamic and whole-word masking (trainer/data/masking.py) and the loader that applies it: masks
restore and redraw, follow BERT's statistics, keep whole words whole, depend only on (seed,
epoch, global sample index), and a foreign file is one clear error."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.synthetic_shards import write_shard
from trainer.data import DataError, ShardedTrainData, find_shards
from trainer.data.masking import DynamicMasker, MaskingError
from vocab.core.layout import bert_specials
from vocab.kinds import load_vocab

SEQ, PRED = 64, 10
N_WORDS, N_CONT = 300, 100   # pieces "w0.." start words, "##c0.." continue them


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wwm_vocab")
    tokens = bert_specials() + [f"w{i}" for i in range(N_WORDS)] + [f"##c{i}" for i in range(N_CONT)]
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return load_vocab(folder)


def sentences(spec, n, seed=0, seq=SEQ):
    """n rows `[CLS] words [SEP] words [SEP]` of words of 1-3 pieces, padded; the original ids."""
    rng = np.random.default_rng(seed)
    first_word, first_cont = spec.id_of("w0"), spec.id_of("##c0")
    ids = np.zeros((n, seq), np.int32)
    for r in range(n):
        length = int(rng.integers(seq // 2, seq + 1))
        row = [spec.cls_id]
        while len(row) < length - 2:
            row.append(first_word + int(rng.integers(N_WORDS)))
            row += [first_cont + int(rng.integers(N_CONT)) for _ in range(int(rng.integers(0, 3)))]
            if len(row) >= length // 2 and spec.sep_id not in row[1:]:
                row.append(spec.sep_id)
        row = row[:length - 1] + [spec.sep_id]
        ids[r, :len(row)] = row
    return ids


def static_arrays(spec, original, seed=1):
    """The HDF5 arrays of `original` with BERT-like static masks (all [MASK]: restorable)."""
    rng = np.random.default_rng(seed)
    n = len(original)
    ids, pos = original.copy(), np.zeros((n, PRED), np.int32)
    mids = np.zeros((n, PRED), np.int32)
    for r in range(n):
        cand = np.flatnonzero((original[r] > spec.mask_id))
        k = min(PRED, max(1, round(0.15 * len(cand))))
        chosen = np.sort(rng.choice(cand, k, replace=False))
        pos[r, :k], mids[r, :k] = chosen, original[r, chosen]
        ids[r, chosen] = spec.mask_id
    return {"input_ids": ids, "input_mask": (original > 0).astype(np.int8),
            "segment_ids": np.zeros_like(ids, dtype=np.int8), "masked_lm_positions": pos,
            "masked_lm_ids": mids, "next_sentence_labels": np.zeros(n, np.int8)}


def copy(arrays):
    return {k: v.copy() for k, v in arrays.items()}


def real_slots(arrays):
    pos = arrays["masked_lm_positions"]
    return np.cumprod(pos != 0, axis=1).astype(bool)


def test_restore_gives_back_the_original_tokens(spec):
    original = sentences(spec, 200)
    masker = DynamicMasker(spec, PRED, seed=1)
    assert np.array_equal(masker.restore(static_arrays(spec, original), "x.hdf5"), original)


def test_masking_statistics_over_10k_instances(spec):
    """Share masked, 80/10/10, never a special token or padding, ascending, at most max_pred."""
    original = sentences(spec, 10_000, seed=2)
    arrays = copy(static_arrays(spec, original))
    DynamicMasker(spec, PRED, seed=7).apply(arrays, epoch=0, sample_index=np.arange(10_000), source="x")
    valid = real_slots(arrays)
    pos = arrays["masked_lm_positions"]
    n_cand = (original > spec.mask_id).sum(axis=1)
    count = valid.sum(axis=1)
    assert np.array_equal(count, np.minimum(PRED, np.maximum(1, np.rint(0.15 * n_cand))))
    assert abs(count.sum() / n_cand.sum() - 0.15) < 0.01
    assert all(np.all(np.diff(p[v]) > 0) for p, v in zip(pos[:500], valid[:500]))
    at = np.take_along_axis(original, pos, axis=1)[valid]
    assert (at > spec.mask_id).all()                     # only real word pieces are masked
    assert np.array_equal(arrays["masked_lm_ids"][valid], at)
    now = np.take_along_axis(arrays["input_ids"], pos, axis=1)[valid]
    shares = [(now == spec.mask_id).mean(), ((now != spec.mask_id) & (now != at)).mean(), (now == at).mean()]
    assert abs(shares[0] - 0.8) < 0.01 and abs(shares[1] - 0.1) < 0.01 and abs(shares[2] - 0.1) < 0.01
    untouched = np.ones_like(original, dtype=bool)
    np.put_along_axis(untouched, pos, ~valid, axis=1)
    untouched[:, 0] = True
    assert np.array_equal(arrays["input_ids"][untouched], original[untouched])


def test_whole_words_are_masked_whole_with_one_choice_per_word(spec):
    original = sentences(spec, 3000, seed=3)
    arrays = copy(static_arrays(spec, original))
    DynamicMasker(spec, PRED, seed=7, whole_word=True).apply(arrays, 0, np.arange(3000), "x")
    valid = real_slots(arrays)
    cont = np.array([t.startswith("##") for t in spec.tokens])
    mixed_words = split_words = 0
    for r in range(3000):
        chosen = set(arrays["masked_lm_positions"][r][valid[r]].tolist())
        assert 1 <= len(chosen) <= PRED
        row = original[r]
        j = 1
        while j < len(row) and row[j]:
            end = j + 1
            while end < len(row) and cont[row[end]] and row[end]:
                end += 1
            inside = [p in chosen for p in range(j, end)]
            split_words += any(inside) and not all(inside)
            if all(inside) and end - j > 1:
                kinds = {"mask" if arrays["input_ids"][r, p] == spec.mask_id else
                         "keep" if arrays["input_ids"][r, p] == row[p] else "random" for p in range(j, end)}
                mixed_words += len(kinds - {"keep"}) > 1 or ("mask" in kinds and "keep" in kinds)
            j = end
    assert split_words == 0
    assert mixed_words == 0


def test_masks_are_a_function_of_seed_epoch_and_sample_index_only(spec):
    original = sentences(spec, 500, seed=4)
    base = static_arrays(spec, original)
    masker = DynamicMasker(spec, PRED, seed=11)
    idx = np.arange(1000, 1500)
    a = masker.apply(copy(base), 3, idx, "x")
    perm = np.random.default_rng(0).permutation(500)      # other rows around, another order
    b = masker.apply({k: v[perm] for k, v in base.items()}, 3, idx[perm], "x")
    for key in ("input_ids", "masked_lm_positions", "masked_lm_ids"):
        assert np.array_equal(a[key][perm], b[key])
    c = masker.apply(copy(base), 4, idx, "x")              # another epoch: other masks
    assert (c["masked_lm_positions"] != a["masked_lm_positions"]).any(axis=1).mean() > 0.9
    d = DynamicMasker(spec, PRED, seed=12).apply(copy(base), 3, idx, "x")   # another seed
    assert (d["masked_lm_positions"] != a["masked_lm_positions"]).any(axis=1).mean() > 0.9


@pytest.mark.parametrize("damage, message", [
    (lambda a: a["masked_lm_ids"].__setitem__((3, 0), 10_000), "outside the vocab"),
    (lambda a: a["masked_lm_ids"].__setitem__((3, 0), 0), "never masked text"),
    (lambda a: a["input_ids"].__setitem__((3, SEQ // 2 - 1), 103), "[MASK] tokens remain"),
    (lambda a: a["masked_lm_positions"].__setitem__((3, 0), SEQ + 5), "outside the sequence"),
])
def test_static_masks_that_do_not_restore_are_an_error_naming_the_file(spec, damage, message):
    arrays = copy(static_arrays(spec, sentences(spec, 20)))
    damage(arrays)
    assert arrays["masked_lm_positions"][3, 0] != SEQ // 2 - 1
    with pytest.raises(MaskingError, match=r"bad\.hdf5: --masking dynamic cannot restore.*" + re.escape(message)):
        DynamicMasker(spec, PRED, seed=1).apply(arrays, 0, np.arange(20), "bad.hdf5")


# -- the loader -------------------------------------------------------------------------------
def batches(data, n):
    it = iter(data)
    out = [next(it) for _ in range(n)]
    data.close()
    return out


def cat(bs, key):
    return np.concatenate([b[key].numpy() for b in bs])


def test_the_loader_masks_alike_on_one_and_two_ranks_and_after_a_resume(tiny_shards, tiny_vocab):
    files = find_shards(tiny_shards).train
    spec = load_vocab(tiny_vocab)
    masker = DynamicMasker(spec, max_pred=5, seed=3, whole_word=True)
    one = batches(ShardedTrainData(files, 8, 3, 0, 1, masker=masker), 48)   # 384 = one epoch
    two = [batches(ShardedTrainData(files, 8, 3, r, 2, masker=masker), 24) for r in (0, 1)]
    for key in ("input_ids", "masked_lm_positions", "masked_lm_labels"):
        assert np.array_equal(cat(one, key), np.concatenate([cat(two[0], key), cat(two[1], key)]))
    # the next epoch has other masks on the same samples
    data = ShardedTrainData(files, 8, 3, 0, 1, masker=masker)
    both = batches(data, 96)
    assert not np.array_equal(cat(both[:48], "masked_lm_positions"), cat(both[48:], "masked_lm_positions"))
    # a resumed loader gives the uninterrupted batches
    first = ShardedTrainData(files, 8, 3, 0, 1, masker=masker)
    batches(first, 30)
    resumed = ShardedTrainData(files, 8, 3, 0, 1, masker=masker)
    resumed.load_state_dict(first.state_dict())
    assert np.array_equal(cat(batches(resumed, 30), "input_ids"), cat(both[30:60], "input_ids"))
    # ...but not under other masking settings
    static = ShardedTrainData(files, 8, 3, 0, 1)
    with pytest.raises(DataError, match="the masking changed since the checkpoint"):
        static.load_state_dict(first.state_dict())


def test_a_damaged_shard_is_a_data_error_naming_it(tmp_path, tiny_vocab):
    d = tmp_path / "hdf5" / "xxwiki"
    path = write_shard(d / "xxwiki_training_0.hdf5", 32, vocab_size=200, seed=0)
    import h5py

    with h5py.File(path, "r+") as fh:
        fh["masked_lm_ids"][0, 0] = 0                     # the [MASK] there can't be restored
    masker = DynamicMasker(load_vocab(tiny_vocab), max_pred=5, seed=1)
    with pytest.raises(DataError, match=f"{path}: --masking dynamic cannot restore"):
        batches(ShardedTrainData(find_shards(tmp_path / "hdf5").train, 8, 1, 0, 1, masker=masker), 1)


def test_masking_settings_are_checked(spec):
    with pytest.raises(MaskingError, match="--max-pred"):
        from types import SimpleNamespace
        from trainer.data.masking import build_masker
        build_masker(SimpleNamespace(masking="dynamic", vocab_file=str(Path(spec.vocab_file)),
                                     input_dir="nowhere", mlm_probability=0.4, seed=1,
                                     whole_word_masking=False, mask_replace_prob=1.0,
                                     random_replace_prob=0.0), seq_len=128, max_pred=20,
                     packed=False)


def test_segmenter_words_from_word_starts_are_masked_whole(spec):
    """Where encode stored `word_starts` (Chinese: one token per character, words from jieba),
    whole-word masking groups by it, not by ## pieces."""
    original = sentences(spec, 2000, seed=5)
    arrays = copy(static_arrays(spec, original))
    rng = np.random.default_rng(0)
    flags = (rng.random(original.shape) < 0.4).astype(np.int8)     # words of ~2.5 tokens
    flags[(original <= spec.mask_id)] = 1                             # [CLS]/[SEP] words of their own
    flags[:, 1] = 1
    flags[original == 0] = 0
    arrays["word_starts"] = flags
    DynamicMasker(spec, PRED, seed=7, whole_word=True).apply(arrays, 0, np.arange(2000), "x")
    valid = real_slots(arrays)
    word = np.cumsum(flags, axis=1)
    for r in range(2000):
        chosen = arrays["masked_lm_positions"][r][valid[r]]
        for w in np.unique(word[r, chosen]):
            members = np.flatnonzero((word[r] == w) & (original[r] > spec.mask_id))
            assert set(members.tolist()) <= set(chosen.tolist()), (r, w)
