"""Several languages in one loader (trainer/data/mixture.py): the shares follow the exponent
exactly over a cycle, the schedule switches where it says, a resume yields the uninterrupted
batches on every rank, each language keeps its own epochs and its ranks' blocks, and a state the
order cannot be kept from is refused in one line."""
from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.synthetic_shards import make_samples, write_shard
from trainer.config.languages import parse_alpha_schedule, schedule_steps
from trainer.data import DataError, ShardedTrainData
from trainer.data.mixture import (
    CYCLE,
    MixedTrainData,
    MixSchedule,
    cycle_pattern,
    find_languages,
    quantise,
    sampling_shares,
)

LANG_ID = 100_000   # input_ids[:, 1] = language * LANG_ID + file * 1000 + row + 1


def id_languages(root, sizes_by_lang: dict, seq_len=8, max_pred=2, test=0):
    """A folder per language whose training rows carry a unique id in input_ids[:, 1]."""
    folders = {}
    for lang_no, (code, sizes) in enumerate(sorted(sizes_by_lang.items())):
        d = root / code
        for f, n in enumerate(sizes):
            s = make_samples(n, seq_len, max_pred, 200, seed=f)
            s["input_ids"][:, 1] = LANG_ID * lang_no + 1000 * f + np.arange(n) + 1
            write_shard(d / f"{code}wiki_training_{f}.hdf5", n, samples=s)
        if test:
            write_shard(d / f"{code}wiki_test_0.hdf5", test, seq_len, max_pred, 200, seed=99)
        folders[code] = str(d)
    return find_languages(folders)


def ids(batch):
    return batch["input_ids"][:, 1].tolist()


def take(loader, k):
    it = iter(loader)
    out = [ids(next(it)) for _ in range(k)]
    loader.close()
    return out


def lang_of(i: int) -> int:
    return (i - 1) // LANG_ID


@pytest.mark.parametrize("sizes", [(1000, 10, 100), (5, 5), (1, 10**6, 3, 70, 5000), (7,), (2, 3, 5, 7, 11, 13)])
@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.7, 1.0])
def test_the_shares_follow_the_exponent_exactly_over_a_cycle(sizes, alpha):
    p = np.array(sizes, dtype=float) / sum(sizes)
    want = p ** alpha / (p ** alpha).sum()               # the formula
    assert np.allclose(sampling_shares(sizes, alpha), want)
    counts = quantise(want)
    assert counts.sum() == CYCLE and (counts >= 1).all()
    # each count is the formula's within one sample of 65,536 (a language too small for one
    # sample gets one)
    assert (np.abs(counts - want * CYCLE) < 1).all() or (want * CYCLE < 1).any()
    if alpha == 0.0:
        assert counts.max() - counts.min() <= 1          # uniform
    # any CYCLE consecutive positions of a phase hold exactly the counts
    sched = MixSchedule(sizes, [(alpha, 0)])
    for start in (0, 12_345, 3 * CYCLE + 7):
        drawn = np.bincount(sched.languages(start, CYCLE), minlength=len(sizes))
        assert (drawn == counts).all()
    # and every prefix is within (1 + L * share) / 2 of the share: near-exact at any point
    pattern = cycle_pattern(counts)
    seen = np.zeros((CYCLE, len(sizes)), np.int64)
    seen[np.arange(CYCLE), pattern] = 1
    dev = np.abs(seen.cumsum(0) - np.arange(1, CYCLE + 1)[:, None] * counts / CYCLE)
    assert (dev <= (1 + len(sizes) * counts / CYCLE) / 2 + 1e-9).all()


def test_alpha_one_is_proportional_to_the_data():
    counts = quantise(sampling_shares((1, 3, 12), 1.0), 16)
    assert counts.tolist() == [1, 3, 12]


def test_the_schedule_switches_where_it_says():
    # the flag's two forms, as steps of a 10-step run
    assert schedule_steps(parse_alpha_schedule("0.7,0.5,0.3"), 10) == [(0.7, 0), (0.5, 3), (0.3, 6)]
    assert schedule_steps(parse_alpha_schedule("0.7@0,0.5@0.4,0.3@0.8"), 10) == [
        (0.7, 0), (0.5, 4), (0.3, 8)]
    assert schedule_steps(parse_alpha_schedule("0.7@0,0.3@0.29"), 100) == [(0.7, 0), (0.3, 29)]
    sizes = (900, 80, 20)
    sched = MixSchedule(sizes, [(1.0, 0), (0.5, 1000), (0.0, 5000)])
    drawn = sched.languages(0, 9000)
    for phase, (lo, hi) in enumerate([(0, 1000), (1000, 5000), (5000, 9000)]):
        pattern = cycle_pattern(quantise(sampling_shares(sizes, [1.0, 0.5, 0.0][phase])))
        assert (drawn[lo:hi] == pattern[:hi - lo]).all(), phase   # each phase starts its pattern
    # the counts before any position, closed-form, are those of the positions drawn
    for t in (0, 1, 999, 1000, 1001, 4999, 5000, 8999, 9000):
        assert (sched.counts_before(t) == np.bincount(drawn[:t], minlength=3)).all(), t
    # a late phase over many cycles (closed-form: no replay)
    far = 5000 + 5 * CYCLE + 17
    assert (sched.counts_before(far) - sched.counts_before(5000)
            == 5 * sched.counts[2] + np.bincount(sched.patterns[2][:17], minlength=3)).all()


@pytest.mark.parametrize("world,batch", [(1, 3), (2, 4), (3, 5)])
def test_a_resume_yields_the_uninterrupted_batches_on_every_rank(tmp_path, world, batch):
    langs = id_languages(tmp_path, {"hr": (30, 21), "sr": (12,), "bs": (9, 4)})
    phases = [(0.7, 0), (0.3, 4 * batch)]
    steps = 20
    per_rank = {lang.code: lang.num_samples // world for lang in langs}
    seen = {lang.code: [] for lang in langs}
    for rank in range(world):
        def loader():
            return MixedTrainData(langs, batch, 7, rank, world, phases)
        straight = take(loader(), steps)
        for k in (1, 4, 5, 13):
            first = loader()
            assert take(first, k) == straight[:k]
            resumed = loader()
            resumed.load_state_dict(first.state_dict())
            assert take(resumed, steps - k) == straight[k:], (rank, k)
        # the languages of the batches are the schedule's
        sched = loader().schedule
        flat = sum(straight, [])
        assert [lang_of(i) for i in flat] == sched.languages(0, len(flat)).tolist()
        # each language's own epochs: its first per-rank block, then the same samples again
        for no, lang in enumerate(langs):
            mine = [i for i in flat if lang_of(i) == no]
            n = per_rank[lang.code]
            assert len(set(mine[:n])) == len(mine[:n]) == min(n, len(mine))
            if len(mine) >= 2 * n:   # epoch 1: another block of n distinct samples
                assert len(set(mine[n:2 * n])) == n
                assert world > 1 or set(mine[n:2 * n]) == set(mine[:n])   # one rank: all again
            seen[lang.code].append(set(mine[:n]))
    # within a language's epoch the ranks read disjoint blocks
    for code, blocks in seen.items():
        assert sum(len(b) for b in blocks) == len(set().union(*blocks)), code


def test_a_small_language_repeats_its_epochs_more_often(tmp_path):
    langs = id_languages(tmp_path, {"hr": (200,), "sr": (10,)})
    data = MixedTrainData(langs, 10, 1, 0, 1, [(0.0, 0)])   # uniform: sr 10x its share of the data
    take(data, 30)
    data.samples_consumed = 300
    assert data.epochs() == {"hr": 0, "sr": 15}
    assert data.epoch == 0


def test_dynamic_mask_keys_stay_distinct_across_languages(tmp_path, tiny_vocab):
    from trainer.data.masking import DynamicMasker
    from vocab.kinds import load_vocab

    for code in ("hr", "sr"):   # byte-identical files in both languages
        write_shard(tmp_path / code / f"{code}wiki_training_0.hdf5", 64, 16, 4, 200, seed=0)
    langs = find_languages({"hr": str(tmp_path / "hr"), "sr": str(tmp_path / "sr")})
    masker = DynamicMasker(load_vocab(tiny_vocab.parent), max_pred=4, seed=1)
    data = MixedTrainData(langs, 8, 1, 0, 1, [(0.3, 0)], masker=masker)
    hr, sr = data.streams
    assert sr.offsets[0] == hr.offsets[0] + langs[0].num_samples   # sr's indices follow hr's
    piece = hr.order.pieces(0, 0)[0]
    rows = hr._load(piece)
    a = hr._mask(piece, {k: v.copy() for k, v in rows.items()})
    b = sr._mask(piece, {k: v.copy() for k, v in rows.items()})
    assert not np.array_equal(a["masked_lm_positions"], b["masked_lm_positions"])


def test_a_state_the_order_cannot_be_kept_from_is_refused(tmp_path):
    langs = id_languages(tmp_path, {"hr": (20, 12), "sr": (8,)})
    data = MixedTrainData(langs, 2, 3, 0, 2, [(0.5, 0)])
    take(data, 3)
    state = data.state_dict()
    with pytest.raises(DataError, match="the languages, their data or the seed changed"):
        MixedTrainData(langs[:1], 2, 3, 0, 2, [(0.5, 0)]).load_state_dict(state)
    with pytest.raises(DataError, match="the languages, their data or the seed changed"):
        MixedTrainData(langs, 2, 4, 0, 2, [(0.5, 0)]).load_state_dict(state)
    with pytest.raises(DataError, match="--sampling_alpha schedule changed"):
        MixedTrainData(langs, 2, 3, 0, 2, [(0.3, 0)]).load_state_dict(state)
    with pytest.raises(DataError, match="--sampling_alpha schedule changed"):
        MixedTrainData(langs, 2, 3, 0, 2, [(0.5, 0), (0.3, 8)]).load_state_dict(state)
    with pytest.raises(DataError, match="written by 2 ranks and this run has 1.*nproc_per_node=2"):
        MixedTrainData(langs, 2, 3, 0, 1, [(0.5, 0)]).load_state_dict(state)
    # a fresh state (nothing consumed) may start on another number of ranks
    MixedTrainData(langs, 2, 3, 0, 1, [(0.5, 0)]).load_state_dict(
        MixedTrainData(langs, 2, 3, 0, 2, [(0.5, 0)]).state_dict())
    # one folder's state and several languages' do not mix
    one = ShardedTrainData(langs[0].shards.train, 2, 3, 0, 2)
    with pytest.raises(DataError, match="trained on several languages \\(hr, sr\\)"):
        one.load_state_dict(state)
    with pytest.raises(DataError, match="trained on one --input_dir folder"):
        data.load_state_dict(one.state_dict())


def test_bad_language_folders_are_one_line_each(tmp_path):
    ok = id_languages(tmp_path / "ok", {"hr": (10,)})[0]
    (tmp_path / "empty").mkdir()
    write_shard(tmp_path / "empty" / "srwiki_test_0.hdf5", 4, 8, 2, 200)
    with pytest.raises(DataError, match="sr=.*holds no \\*training\\*.hdf5 files: the sr corpus is empty"):
        find_languages({"hr": ok.input_dir, "sr": str(tmp_path / "empty")})
    write_shard(tmp_path / "zero" / "bswiki_training_0.hdf5", 0, 8, 2, 200,
                samples={k: v[:0] for k, v in make_samples(1, 8, 2, 200, 0).items()})
    with pytest.raises(DataError, match="bs=.*the bs corpus is empty"):
        find_languages({"hr": ok.input_dir, "bs": str(tmp_path / "zero")})
    write_shard(tmp_path / "long" / "srwiki_training_0.hdf5", 10, 16, 3, 200)
    with pytest.raises(DataError, match="different \\(seq_len, max_pred\\): hr \\(8, 2\\), sr \\(16, 3\\)"):
        find_languages({"hr": ok.input_dir, "sr": str(tmp_path / "long")})
    with pytest.raises(DataError, match="--input_dir sr=.*nowhere is not a directory"):
        find_languages({"hr": ok.input_dir, "sr": str(tmp_path / "nowhere")})
    write_shard(tmp_path / "tiny" / "srwiki_training_0.hdf5", 2, 8, 2, 200)
    langs = find_languages({"hr": ok.input_dir, "sr": str(tmp_path / "tiny")})
    with pytest.raises(DataError, match="--input_dir sr=.*: 2 training samples cannot feed 3 ranks"):
        MixedTrainData(langs, 1, 0, 0, 3, [(0.3, 0)])


def test_memory_is_bounded_by_about_two_shards_per_language(tmp_path):
    """Peak Python-heap memory while two languages of five shards each stream in batches that
    mix both: about two pieces per language (the current one and the next loading) and the
    finished batches, far below the ten shards of the data."""
    import tracemalloc

    import torch  # noqa: F401  (imported before tracing: to_batch imports it lazily)

    n, seq_len, max_pred, files = 1000, 128, 20, 5
    for code in ("hr", "sr"):
        for i in range(files):
            write_shard(tmp_path / code / f"{code}wiki_training_{i}.hdf5", n, seq_len, max_pred, 3000, seed=i)
    langs = find_languages({c: str(tmp_path / c) for c in ("hr", "sr")})
    take(MixedTrainData(langs, 32, 0, 0, 1, [(1.0, 0)]), 2)   # first-use allocations, untraced
    data = MixedTrainData(langs, 32, 0, 0, 1, [(1.0, 0)])
    shard_bytes = n * (seq_len * (4 + 1 + 1) + max_pred * (4 + 4) + 1)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        it = iter(data)
        for _ in range(2 * files * n // 32):
            next(it)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
        data.close()
    # measured 4.9 shards: the single-folder loader's bound (2.75 shards) per language, plus
    # the batches ahead
    batch_bytes = 32 * (3 * seq_len + 2 * max_pred + 1) * 8
    bound = 2 * 2.75 * shard_bytes + (data.depth + 3) * batch_bytes
    assert peak < bound, f"peak {peak / shard_bytes:.2f} shards, bound {bound / shard_bytes:.2f}"
