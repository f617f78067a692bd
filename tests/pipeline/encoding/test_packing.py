"""Packed rows, layout 2 (pipeline/encoding/packing.py): every document once per pass in
reading order as `[CLS] tokens [SEP]`, every row beginning with [CLS], doc_starts marking
exactly the segments, a long article going on in continuation rows, padding only in the last
row, rows that do not depend on the batch they are made in."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from pipeline.encoding.instances import Corpus
from pipeline.encoding.masking import Masker
from pipeline.encoding.packing import pack_batch, plan_packed
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_vocab
from tests.helpers.packed_rows import documents_of_rows, unmask
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.kinds import load_vocab

P = 12


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    text = documents_text(make_documents(60, seed=3))
    spec = load_vocab(write_vocab(tmp_path_factory.mktemp("v"), vocab_tokens(text), lower_case=False))
    return spec, Corpus.from_text(text, FastWordPiece(spec))


@dataclass
class Docs:
    """A corpus of given document lengths (ids from the vocab's real pieces), no files."""

    tokens: np.ndarray
    doc_token_bounds: np.ndarray
    word_starts: np.ndarray | None = None

    @classmethod
    def of(cls, lengths, spec, seed=0):
        bounds = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        real = np.array([i for i, t in enumerate(spec.tokens) if not spec.is_special(t)], np.int32)
        ids = np.random.default_rng(seed).choice(real, size=int(bounds[-1])).astype(np.int32)
        return cls(ids, bounds)

    def documents(self):
        b = self.doc_token_bounds
        return [tuple(self.tokens[b[d]:b[d + 1]]) for d in range(len(b) - 1)]


def all_rows(corpus, plan, masker, batch=50, seed=1):
    rng = np.random.default_rng(seed)
    parts = [pack_batch(corpus, plan, rows, masker, rng) for rows in plan.batches(batch)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


@pytest.mark.parametrize("whole_word", [False, True])
@pytest.mark.parametrize("L", [16, 64])
def test_every_document_once_per_pass_in_reading_order(setup, whole_word, L):
    spec, corpus = setup
    dupe = 2
    plan = plan_packed(corpus, max_seq=L, dupe_factor=dupe, seed=9)
    a = all_rows(corpus, plan, Masker(spec, L, P, 0.3, whole_word=whole_word))
    ids, mask = unmask(a), a["input_mask"]
    assert len(ids) == len(plan) and ids.dtype == np.int32
    assert (a["segment_ids"] == 0).all() and (a["next_sentence_labels"] == 0).all()
    docs = documents_of_rows(ids, mask, a["doc_starts"], spec.cls_id, spec.sep_id)
    b = corpus.doc_token_bounds
    originals = [tuple(corpus.tokens[b[d]:b[d + 1]]) for d in range(corpus.n_docs)]
    assert len(docs) == dupe * corpus.n_docs
    for p in range(dupe):   # each pass: every document once, its tokens in order
        got = docs[p * corpus.n_docs:(p + 1) * corpus.n_docs]
        assert sorted(got) == sorted(originals)
    assert docs[:corpus.n_docs] != docs[corpus.n_docs:]    # another order each pass
    # full rows but the last; its padding is the pad id, unmarked
    assert mask[:-1].all() and not mask[-1].all() or mask.all()
    assert (ids[mask == 0] == spec.pad_id).all() and (a["doc_starts"][mask == 0] == 0).all()
    # static masks: ascending, on no [CLS], [SEP] or padding
    pos = a["masked_lm_positions"]
    assert not np.isin(a["masked_lm_ids"][pos > 0], [spec.cls_id, spec.sep_id, spec.pad_id]).any()
    assert (np.take_along_axis(mask, pos, 1)[pos > 0] == 1).all()
    if not whole_word:   # a full row's share of its maskable tokens
        cand = (mask == 1) & ~np.isin(ids, [spec.cls_id, spec.sep_id])
        n = (pos > 0).sum(1)
        assert (n == np.minimum(P, np.maximum(1, np.rint(0.3 * cand.sum(1))))).all()


def test_a_long_article_goes_on_in_continuation_rows(setup):
    spec, _ = setup
    L = 16
    corpus = Docs.of([5, 100, 7], spec)
    plan = plan_packed(corpus, max_seq=L, dupe_factor=1, seed=1)
    a = all_rows(corpus, plan, Masker(spec, L, 3, 0.15), batch=4)
    ids = unmask(a)
    docs = documents_of_rows(ids, a["input_mask"], a["doc_starts"], spec.cls_id, spec.sep_id)
    assert sorted(docs) == sorted(corpus.documents())
    long = corpus.documents()[1]
    # the rows that hold nothing but the long article: an inserted [CLS] and its next 15 tokens
    only = [i for i in range(len(ids)) if a["doc_starts"][i].sum() == 1 and a["input_mask"][i].all()
            and spec.sep_id not in ids[i]]
    assert len(only) >= 100 // (L - 1) - 2
    text = tuple(long)     # each is the run of the article's tokens after the row before's
    at = [next(j for j in range(len(text)) if text[j:j + L - 1] == tuple(ids[i, 1:])) for i in only]
    assert at == list(range(at[0], at[0] + (L - 1) * len(at), L - 1))
    assert only == list(range(only[0], only[0] + len(only)))   # consecutive rows


@pytest.mark.parametrize("n, rows, final_sep", [(13, 2, True), (14, 2, False), (15, 3, True)])
def test_the_final_separator_alone_in_a_row_is_dropped(setup, n, rows, final_sep):
    spec, _ = setup
    L = 8   # one document of n tokens: rows [C t1..t7], [C t8..t14], ...
    corpus = Docs.of([n], spec)
    plan = plan_packed(corpus, max_seq=L, dupe_factor=1, seed=1)
    a = all_rows(corpus, plan, Masker(spec, L, 2, 0.15))
    assert len(plan) == rows and plan.length == n + 1 + final_sep
    ids = unmask(a)
    assert (ids == spec.sep_id).any() == final_sep
    assert documents_of_rows(ids, a["input_mask"], a["doc_starts"], spec.cls_id,
                             spec.sep_id) == corpus.documents()
    last = int(a["input_mask"][-1].sum())
    assert last >= 2 and (a["masked_lm_positions"][-1] < last).all()


def test_rows_do_not_depend_on_the_batch(setup):
    spec, corpus = setup
    L = 24
    plan = plan_packed(corpus, max_seq=L, dupe_factor=3, seed=4)
    masker = Masker(spec, L, P, 0.15)
    whole = all_rows(corpus, plan, masker, batch=len(plan))
    for batch in (1, 7):
        part = all_rows(corpus, plan, masker, batch=batch)
        for key in ("input_mask", "doc_starts", "segment_ids"):
            assert (part[key] == whole[key]).all()
        assert (unmask(part) == unmask(whole)).all()


def test_a_document_boundary_at_a_row_boundary_needs_no_inserted_cls(setup):
    spec, _ = setup
    L = 8   # [C a1..a5 S] fills 7 slots, [C b1 ...] begins the next row's last slot ...
    corpus = Docs.of([6, 5, 20, 1, 13, 3], spec, seed=2)
    for seed in range(6):
        plan = plan_packed(corpus, max_seq=L, dupe_factor=2, seed=seed)
        a = all_rows(corpus, plan, Masker(spec, L, 2, 0.15), batch=3)
        docs = documents_of_rows(unmask(a), a["input_mask"], a["doc_starts"], spec.cls_id, spec.sep_id)
        assert sorted(docs[:6]) == sorted(corpus.documents()) == sorted(docs[6:])
        # every row holds L stream tokens, or its inserted [CLS] and L - 1 of them
        starts, cont = plan.row_starts(range(len(plan)))
        step = np.diff(starts)
        assert ((step == L) | (step == L - 1)).all()
        assert (step[~cont[:-1]] == L).all() and (step[cont[:-1]] == L - 1).all()


def test_a_row_without_candidates_gets_no_mask(setup):
    spec, _ = setup
    ids = np.array([[spec.cls_id, spec.sep_id, 0, 0, 0, 0]], dtype=np.int32)
    out = Masker(spec, 6, 3, 0.3).mask_rows(ids, np.zeros((1, 6), dtype=bool),
                                            np.random.default_rng(0))
    assert (out["masked_lm_positions"] == 0).all() and (out["masked_lm_ids"] == 0).all()
