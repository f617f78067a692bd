"""Instances in any tokenizer's own layout (pipeline/encoding/masking.py, packing.py): its
cls/sep, its pad id in every padded slot (XLM-R's 1: nothing assumes 0), B's segment id as its
post-processor gives it, whole words from its word starts, masks only on real tokens and random
replacements only from its real pieces. A stand-in spec of the shared surface, no files."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.encoding.instances import Corpus, plan_instances
from pipeline.encoding.masking import Masker
from pipeline.encoding.packing import pack_batch, plan_packed
from tests.helpers.packed_rows import documents_of_rows, unmask

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")


@dataclass
class XlmrLikeSpec:
    """The surface of vocab/kinds/wordpiece.py with XLM-R's ids: <s> 0, <pad> 1, </s> 2, <unk> 3, <mask> 4."""

    tokens: tuple = SPECIALS + tuple(f"\u2581w{i}" if i % 3 == 0 else f"p{i}" for i in range(60))
    pad_id: int = 1
    cls_id: int = 0
    sep_id: int = 2
    mask_id: int = 4
    unk_id: int = 3
    pair_type_id: int = 0
    folder: str = "xlmr-like"

    @property
    def size(self):
        return len(self.tokens)

    def is_special(self, token):
        return token in SPECIALS

    def continues_word(self, token):
        return not self.is_special(token) and not token.startswith("\u2581")


class WordIdEncoder:
    """ids 5.. with a word start every third token, as a tokenizer's word ids would give them."""

    def encode_words(self, text):
        lines = text.split("\n")
        counts = np.array([len(line.split()) for line in lines], dtype=np.int64)
        ids = np.array([5 + int(w[1:]) % 60 for line in lines for w in line.split()], dtype=np.int32)
        starts = np.array([i % 3 == 0 for line in lines for i, _ in enumerate(line.split())], dtype=bool)
        return ids, counts, starts


def corpus():
    rng = np.random.default_rng(0)
    docs = ["\n".join(" ".join(f"t{rng.integers(99)}" for _ in range(rng.integers(3, 30)))
                      for _ in range(rng.integers(1, 6))) for _ in range(40)]
    return Corpus.from_text("\n\n".join(docs) + "\n", WordIdEncoder())


def check(arrays, spec):
    ids, mask = arrays["input_ids"], arrays["input_mask"]
    assert (ids[mask == 0] == spec.pad_id).all() and (mask == 0).any()
    assert not (ids[mask == 1] == spec.pad_id).any()
    pos, orig = arrays["masked_lm_positions"], arrays["masked_lm_ids"]
    rows = np.nonzero(pos)[0]
    at = ids[rows, pos[pos > 0]]
    assert (mask[rows, pos[pos > 0]] == 1).all()
    assert not np.isin(orig[pos > 0], [0, 1, 2, 3, 4]).any()        # never a special or padding
    assert not np.isin(at[at != spec.mask_id], [0, 1, 2, 3]).any()   # random pieces are real ones
    starts = arrays["word_starts"]
    for p, w, m in zip(pos, starts, mask):                          # whole words of the word starts
        chosen = np.zeros(len(w), bool)
        chosen[p[p > 0]] = True
        word = np.cumsum(w) * m
        for g in np.unique(word[chosen]):
            assert chosen[word == g].all()


def test_pairs_in_an_xlmr_like_layout():
    spec, c = XlmrLikeSpec(), corpus()
    plan = plan_instances(c, max_seq=48, dupe_factor=2, short_seq_prob=0.3, seed=1)
    masker = Masker(spec, max_seq=48, max_pred=8, masked_lm_prob=0.15, whole_word=True)
    arrays = masker.make_batch(c.tokens, plan, np.random.default_rng(2), word_starts=c.word_starts)
    check(arrays, spec)
    assert (arrays["input_ids"][:, 0] == 0).all()
    assert (arrays["segment_ids"] == 0).all()          # its post-processor gives B segment 0
    last = arrays["input_mask"].sum(axis=1) - 1
    assert (arrays["input_ids"][np.arange(len(last)), last] == spec.sep_id).all()


def test_packed_rows_in_an_xlmr_like_layout():
    spec, c = XlmrLikeSpec(), corpus()
    plan = plan_packed(c, max_seq=48, dupe_factor=1, seed=1)
    masker = Masker(spec, max_seq=48, max_pred=10, masked_lm_prob=0.15, whole_word=True)
    arrays = pack_batch(c, plan, range(len(plan)), masker, np.random.default_rng(3))
    ids, mask = unmask(arrays), arrays["input_mask"]
    assert (ids[:, 0] == spec.cls_id).all() and (arrays["segment_ids"] == 0).all()
    assert (ids == spec.sep_id).sum() in (c.n_docs, c.n_docs - 1)   # the final one may be dropped
    assert (ids[mask == 0] == spec.pad_id).all() and not (ids[mask == 1] == spec.pad_id).any()
    b = c.doc_token_bounds
    docs = documents_of_rows(ids, mask, arrays["doc_starts"], spec.cls_id, spec.sep_id)
    assert sorted(docs) == sorted(tuple(c.tokens[b[d]:b[d + 1]]) for d in range(c.n_docs))
    # word starts: [CLS] and [SEP] words of their own, a segment's first token starts a word
    ws, ds = arrays["word_starts"].astype(bool), arrays["doc_starts"].astype(bool)
    assert ws[np.isin(ids, [spec.cls_id, spec.sep_id]) & (mask == 1)].all() and not ws[mask == 0].any()
    after_cls = np.zeros_like(ds)
    after_cls[:, 1:] = ds[:, :-1]
    assert ws[after_cls & (mask == 1)].all()
    pos = arrays["masked_lm_positions"]
    assert not np.isin(arrays["masked_lm_ids"][pos > 0], [spec.cls_id, spec.sep_id, spec.pad_id]).any()
