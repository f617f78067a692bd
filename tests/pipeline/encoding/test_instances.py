"""Instance layout and masking: the statistics of BERT's create_pretraining_data on a realistic
sample, the structure of every instance, truncation and whole-word masking."""
from __future__ import annotations

import random

import numpy as np
import pytest

from pipeline.encoding.instances import Corpus, _truncate_pairs, plan_instances
from pipeline.encoding.masking import Masker
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_vocab
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.kinds import load_vocab

MAX_SEQ, MAX_PRED = 64, 10


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    text = documents_text(make_documents(900, seed=11))
    spec = load_vocab(write_vocab(tmp_path_factory.mktemp("v"), vocab_tokens(text), lower_case=False))
    corpus = Corpus.from_text(text, FastWordPiece(spec))
    return spec, corpus


def build(spec, corpus, whole_word=False, seed=5, max_seq=MAX_SEQ, max_pred=MAX_PRED, dupe=5):
    plan = plan_instances(corpus, max_seq=max_seq, dupe_factor=dupe, short_seq_prob=0.1, seed=seed)
    masker = Masker(spec, max_seq, max_pred, 0.15, whole_word=whole_word)
    rng = np.random.default_rng(seed)
    parts = [masker.make_batch(corpus.tokens, plan.take(slice(s, s + 3000)), rng)
             for s in range(0, len(plan), 3000)]
    arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return plan, arrays


def originals(corpus, plan, max_seq, spec):
    """The unmasked sequences, rebuilt from the plan with plain Python."""
    out = np.zeros((len(plan), max_seq), dtype=np.int64)
    t = corpus.tokens
    for i in range(len(plan)):
        a = t[plan.a_start[i]:plan.a_start[i] + plan.a_len[i]].tolist()
        b = t[plan.b_start[i]:plan.b_start[i] + plan.b_len[i]].tolist()
        seq = [spec.cls_id] + a + [spec.sep_id] + b + [spec.sep_id]
        out[i, :len(seq)] = seq
    return out


def test_statistics_of_a_realistic_sample(setup):
    spec, corpus = setup
    plan, arr = build(spec, corpus)
    n = len(plan)
    assert n > 8000
    ids, mask, _seg = arr["input_ids"], arr["input_mask"], arr["segment_ids"]
    pos, mids, nsp = arr["masked_lm_positions"], arr["masked_lm_ids"], arr["next_sentence_labels"]
    length = mask.sum(axis=1).astype(np.int64)
    valid = pos > 0
    # masked share of the non-special tokens: 15% +- 0.5%
    share = valid.sum() / (length - 3).sum()
    assert abs(share - 0.15) < 0.005, share
    # 80% [MASK], 10% random, 10% kept (+- 1%)
    at = np.take_along_axis(ids, pos.astype(np.int64), axis=1)[valid]
    orig = mids[valid]
    as_mask = np.mean(at == spec.mask_id)
    kept = np.mean(at == orig)
    assert abs(as_mask - 0.8) < 0.01 and abs(kept - 0.1) < 0.01 and abs(1 - as_mask - kept - 0.1) < 0.01
    # random next: 50% +- 2% among chunks of two or more sentences; one-sentence chunks always
    assert plan.multi.sum() > 4000
    assert abs(nsp[plan.multi].mean() - 0.5) < 0.02
    assert nsp[~plan.multi].all()
    assert np.array_equal(nsp.astype(bool), plan.random_next)
    # about 10% of the instances had a short target
    assert abs(plan.short.mean() - 0.1) < 0.015
    # (a short target is rough: whole sentences are taken until it is reached)
    assert length[plan.short].mean() < 0.9 * length[~plan.short].mean()
    # no empty A or B, nothing longer than the sequence
    assert (plan.a_len >= 1).all() and (plan.b_len >= 1).all()
    assert (length <= MAX_SEQ).all() and (length == plan.a_len + plan.b_len + 3).all()


def test_every_instance_is_well_formed(setup):
    spec, corpus = setup
    plan, arr = build(spec, corpus, dupe=1)
    ids, mask, seg = arr["input_ids"], arr["input_mask"], arr["segment_ids"]
    pos, mids = arr["masked_lm_positions"].astype(np.int64), arr["masked_lm_ids"]
    assert ids.dtype == np.int32 and mask.dtype == np.int8 and seg.dtype == np.int8
    assert pos.dtype == np.int32 or arr["masked_lm_positions"].dtype == np.int32
    assert arr["next_sentence_labels"].dtype == np.int8
    want = originals(corpus, plan, MAX_SEQ, spec)
    real = {i for i, t in enumerate(spec.tokens) if not spec.is_special(t)}
    for i in range(len(plan)):
        la, lb = int(plan.a_len[i]), int(plan.b_len[i])
        L = la + lb + 3
        assert mask[i, :L].all() and not mask[i, L:].any()
        assert ids[i, 0] == spec.cls_id and ids[i, la + 1] == spec.sep_id and ids[i, L - 1] == spec.sep_id
        assert not ids[i, L:].any()
        assert not seg[i, :la + 2].any() and seg[i, la + 2:L].all() and not seg[i, L:].any()
        p = pos[i][pos[i] > 0]
        k = len(p)
        assert (pos[i, k:] == 0).all() and (mids[i, k:] == 0).all()          # padded with 0
        assert k == min(MAX_PRED, max(1, round(0.15 * (la + lb))))
        assert (np.diff(p) > 0).all()                                         # ascending, distinct
        assert ((p >= 1) & (p < L) & (p != la + 1)).all()                      # not CLS/SEP/padding
        assert (mids[i, :k] == want[i, p]).all()                               # labels = originals
        changed = np.flatnonzero(ids[i] != want[i])
        assert set(changed) <= set(p.tolist())                                 # only masked ones change
        for q in changed:
            assert ids[i, q] == spec.mask_id or int(ids[i, q]) in real       # random ones are real pieces


def test_a_and_b_come_from_the_documents(setup):
    """A is consecutive sentences of one document; an actual-next B continues right after A."""
    spec, corpus = setup
    plan = plan_instances(corpus, max_seq=512, dupe_factor=1, short_seq_prob=0.0, seed=3)
    sb = corpus.sent_bounds
    sent_of_token = np.searchsorted(sb, np.arange(len(corpus.tokens)), "right") - 1
    doc_of_token = np.searchsorted(corpus.doc_bounds, sent_of_token, "right") - 1
    for i in range(len(plan)):
        a0, la, b0, lb = plan.a_start[i], plan.a_len[i], plan.b_start[i], plan.b_len[i]
        assert doc_of_token[a0] == doc_of_token[a0 + la - 1]
        assert doc_of_token[b0] == doc_of_token[b0 + lb - 1]
        if not plan.random_next[i] and la + lb < 509:    # untruncated: B starts where A ends
            assert b0 == a0 + la and a0 in set(sb.tolist())
    # one pass covers (nearly) every token of the shard with an A or an actual-next B
    covered = np.zeros(len(corpus.tokens), dtype=bool)
    for i in range(len(plan)):
        covered[plan.a_start[i]:plan.a_start[i] + plan.a_len[i]] = True
        if not plan.random_next[i]:
            covered[plan.b_start[i]:plan.b_start[i] + plan.b_len[i]] = True
    assert covered.mean() > 0.97


def test_truncation_matches_the_reference_loop():
    rng = random.Random(0)
    la = np.array([rng.randint(1, 300) for _ in range(3000)])
    lb = np.array([rng.randint(1, 300) for _ in range(3000)])
    starts = np.zeros_like(la)
    a0, la2, b0, lb2 = _truncate_pairs(starts, la, starts, lb, 125, np.random.default_rng(0))
    for i in range(len(la)):
        a, b = list(range(la[i])), list(range(lb[i]))
        while len(a) + len(b) > 125:          # truncate_seq_pair, always from the back
            (a if len(a) > len(b) else b).pop()
        assert (la2[i], lb2[i]) == (len(a), len(b))
        assert 0 <= a0[i] <= la[i] - la2[i] and 0 <= b0[i] <= lb[i] - lb2[i]
    cut = (la - la2).sum()
    assert abs(a0.sum() / max(1, cut) - 0.5) < 0.02     # front or back: a fair coin


def test_whole_word_masking_masks_words_whole(setup):
    spec, corpus = setup
    plan, arr = build(spec, corpus, whole_word=True, dupe=2)
    cont = np.array([t.startswith("##") for t in spec.tokens])
    want = originals(corpus, plan, MAX_SEQ, spec)
    pos = arr["masked_lm_positions"].astype(np.int64)
    length = arr["input_mask"].sum(axis=1)
    la = plan.a_len
    n_masked = 0
    for i in range(len(plan)):
        p = set(pos[i][pos[i] > 0].tolist())
        n_masked += len(p)
        assert len(p) <= min(MAX_PRED, max(1, round(0.15 * (length[i] - 3))))
        for q in p:   # the whole word is masked: its continuation pieces and its start
            if q + 1 < length[i] - 1 and q + 1 != la[i] + 1 and cont[want[i, q + 1]]:
                assert q + 1 in p
            if cont[want[i, q]] and q - 1 >= 1 and q - 1 != la[i] + 1:
                assert q - 1 in p
    share = n_masked / (length - 3).sum()
    assert 0.13 < share < 0.155, share


def test_same_seed_same_instances_other_seed_differs(setup):
    spec, corpus = setup
    _, a = build(spec, corpus, seed=1, dupe=1)
    _, b = build(spec, corpus, seed=1, dupe=1)
    _, c = build(spec, corpus, seed=2, dupe=1)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["input_ids"][:100], c["input_ids"][:100])
