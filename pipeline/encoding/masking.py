"""Static masking for a batch of planned instances, vectorised with numpy.

Usage:
    masker = Masker(spec, max_seq=128, max_pred=20, masked_lm_prob=0.15, whole_word=False)
    batch = masker.make_batch(corpus.tokens, plan.take(slice(0, 4096)), np.random.default_rng(1))
    batch["input_ids"], batch["masked_lm_positions"], ...     # the arrays of the HDF5 contract

As in BERT's create_masked_lm_predictions: every token but [CLS]/[SEP] is a candidate; a random
`num_to_predict = min(max_pred, max(1, round(masked_lm_prob * n)))` of them are chosen (with
whole-word masking, all pieces of a word together: word groups are taken in random order and a
group that would overshoot is skipped); each chosen token becomes [MASK] 80% of the time, a
random real word piece 10%, and stays 10%. Positions are stored ascending, padded with 0.
Padding of `input_ids` is the vocabulary's pad id (BERT's [PAD] is 0, XLM-R's <pad> 1), and B's
segment id is the one the tokenizer's post-processor gives a pair's second text (BERT's 1;
RoBERTa's and XLM-R's 0): any tokenizer kind works (the interface of vocab/kinds/base.py).
Two small differences from the reference: `n` counts the non-special tokens (the reference
counts [CLS] and [SEP] too, which pushes short sequences above the masking rate), and with
whole-word masking a ## piece at the start of B (left by truncation) does not join the last
word of A across [SEP].

Scripts without spaces: given the corpus's `word_starts` (segmenter words, one flag per token,
vocab/core/word_starts.py), a word is a start and the tokens after it, so a Chinese word of three
character tokens is masked whole; the batch then also holds `word_starts` for the HDF5
(pipeline/encoding/hdf5_format.py), so the trainer's dynamic masking finds the same words.
"""
from __future__ import annotations

import numpy as np


class Masker:
    def __init__(self, spec, max_seq: int, max_pred: int, masked_lm_prob: float,
                 whole_word: bool = False):
        self.max_seq = max_seq
        self.max_pred = max_pred
        self.prob = masked_lm_prob
        self.whole_word = whole_word
        self.cls_id, self.sep_id, self.mask_id = spec.cls_id, spec.sep_id, spec.mask_id
        self.pad_id = spec.pad_id                 # 0 for BERT's vocab; XLM-R's is 1
        self.pair_type_id = spec.pair_type_id     # B's segment id: 1, or 0 for RoBERTa/XLM-R
        # Random replacements: real word pieces only, never [PAD]/[UNK]/[CLS]/[SEP]/[MASK]/[unusedN]
        # (nor any other special or control token of a transformers tokenizer).
        self.real_ids = np.array([i for i, t in enumerate(spec.tokens) if t and not spec.is_special(t)],
                                 dtype=np.int32)
        if len(self.real_ids) == 0:
            raise ValueError(f"{getattr(spec, 'vocab_file', spec.folder)} has no word pieces besides "
                             "special tokens")
        self.is_continuation = np.array([spec.continues_word(t) for t in spec.tokens], dtype=bool)

    def make_batch(self, tokens: np.ndarray, plan, rng: np.random.Generator,
                   word_starts: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The six HDF5 arrays for the instances of `plan` (an InstancePlan slice), and
        `word_starts` [B, L] when the corpus's word starts are given."""
        L = self.max_seq
        B = len(plan)
        la = plan.a_len.astype(np.int32)
        lb = plan.b_len.astype(np.int32)
        last = la + lb + 2                       # position of the final [SEP]
        J = np.arange(L, dtype=np.int32)[None, :]
        la_ = la[:, None]
        in_a = (J >= 1) & (J <= la_)
        in_b = (J >= la_ + 2) & (J < last[:, None])
        cand = in_a | in_b
        # where each position's token comes from in the shard's token array (0 elsewhere)
        b_from = (plan.b_start - la - 2).astype(np.int64)
        src = b_from[:, None] + J
        src += in_a * (plan.a_start - 1 - b_from)[:, None]
        src *= cand
        ids = tokens[src]
        ids *= cand
        starts = None
        if word_starts is not None:
            prev_cand = np.zeros_like(cand)
            prev_cand[:, 1:] = cand[:, :-1]
            # a segment's first token starts a word even if truncation cut the word's head off
            starts = cand & (word_starts[src] | ~prev_cand)
        rows = np.arange(B)
        ids[:, 0] = self.cls_id
        ids[rows, la + 1] = self.sep_id
        ids[rows, last] = self.sep_id
        input_mask = (J <= last[:, None]).view(np.int8)
        if self.pad_id != 0:                     # the vocabulary's pad id, never an assumed 0
            ids[input_mask == 0] = self.pad_id
        if starts is not None:
            starts_out = (starts | ((J <= last[:, None]) & ~cand)).view(np.int8)
        segment_ids = (in_b | (J == last[:, None])).view(np.int8)
        if self.pair_type_id != 1:
            segment_ids = segment_ids * np.int8(self.pair_type_id)
        del src, in_a

        out = self.mask_rows(ids, cand, rng, starts=starts, n_cand=la + lb)
        out.update(input_mask=input_mask, segment_ids=segment_ids,
                   next_sentence_labels=plan.random_next.view(np.int8))
        if starts is not None:
            out["word_starts"] = starts_out
        return out

    def mask_rows(self, ids: np.ndarray, cand: np.ndarray, rng: np.random.Generator,
                  starts: np.ndarray | None = None, n_cand: np.ndarray | None = None) -> dict:
        """Mask rows laid out already (pairs above, packed rows: pipeline/encoding/packing.py):
        `cand` marks the tokens that may be chosen; `ids` is changed in place. Returns
        input_ids, masked_lm_positions and masked_lm_ids."""
        B, P = len(ids), self.max_pred
        if n_cand is None:
            n_cand = cand.sum(axis=1)
        k = np.minimum(P, np.maximum(1, np.rint(n_cand * self.prob).astype(np.int64)))
        k = np.minimum(k, n_cand)      # a row without candidates gets no mask, never a pad slot
        if self.whole_word:
            positions, count = _positions_from_mask(
                self._choose_whole_words(ids, cand, k, rng, starts), P)
        else:
            positions, count = self._choose_tokens(cand, k, rng)
        valid = np.arange(P)[None, :] < count[:, None]
        positions *= valid
        original = np.take_along_axis(ids, positions, axis=1)
        masked_ids = original * valid

        u = rng.random((B, P), dtype=np.float32)
        random_piece = self.real_ids[rng.integers(0, len(self.real_ids), size=(B, P))]
        new = np.where(u < 0.8, self.mask_id, np.where(u < 0.9, random_piece, original))
        # padding slots point at position 0 and write [CLS] back onto itself
        np.put_along_axis(ids, positions, np.where(valid, new, original), axis=1)
        return {
            "input_ids": ids.astype(np.int32, copy=False),
            "masked_lm_positions": positions.astype(np.int32),
            "masked_lm_ids": masked_ids.astype(np.int32, copy=False),
        }

    def _choose_tokens(self, cand: np.ndarray, k: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
        """A uniform random k-subset of the candidates per row: the k smallest random keys."""
        B, L = cand.shape
        P = self.max_pred
        keys = rng.random((B, L), dtype=np.float32)
        keys -= cand          # candidates in [-1, 0), the rest in [0, 1): candidates come first
        part = np.argpartition(keys, P - 1, axis=1)[:, :P]
        order = np.argsort(np.take_along_axis(keys, part, axis=1), axis=1, kind="stable")
        picked = np.take_along_axis(part, order, axis=1)
        picked[np.arange(P)[None, :] >= k[:, None]] = L
        picked.sort(axis=1)
        return picked, k

    def _choose_whole_words(self, ids, cand, k, rng, starts=None) -> np.ndarray:
        """Boolean [B, L] of masked positions; words (a piece and its ## pieces, or the
        tokens from a word start to the next) stay whole."""
        B, L = ids.shape
        if starts is None:
            prev_cand = np.zeros_like(cand)
            prev_cand[:, 1:] = cand[:, :-1]
            starts = cand & ~(self.is_continuation[ids] & prev_cand)
        group = np.cumsum(starts, axis=1) - 1          # word number of each candidate position
        group[~cand] = L                                # a dummy column for the rest
        flat = (np.arange(B)[:, None] * (L + 1) + group).ravel()
        size = np.bincount(flat, minlength=B * (L + 1)).reshape(B, L + 1)[:, :L]
        n_groups = starts.sum(axis=1)
        keys = rng.random((B, L), dtype=np.float32)
        keys[np.arange(L)[None, :] >= n_groups[:, None]] = 2.0
        order = np.argsort(keys, axis=1, kind="stable")
        size_sorted = np.take_along_axis(size, order, axis=1)
        take = np.zeros((B, L), dtype=bool)
        total = np.zeros(B, dtype=np.int64)
        for r in range(L):
            s = size_sorted[:, r]
            ok = (total < k) & (s > 0) & (total + s <= k)
            take[:, r] = ok
            total += np.where(ok, s, 0)
            if r + 1 >= n_groups.max() or not np.any((total < k) & (r + 1 < n_groups)):
                break
        chosen_group = np.zeros((B, L + 1), dtype=bool)
        np.put_along_axis(chosen_group, order, take, axis=1)
        return np.take_along_axis(chosen_group, group, axis=1) & cand


def _positions_from_mask(chosen: np.ndarray, P: int) -> tuple[np.ndarray, np.ndarray]:
    """Ascending column indices of the True cells per row, padded to P; and their count."""
    B = chosen.shape[0]
    count = chosen.sum(axis=1)
    r, c = np.nonzero(chosen)
    first = np.zeros(B + 1, dtype=np.int64)
    np.cumsum(count, out=first[1:])
    slot = np.arange(len(r)) - first[r]
    out = np.zeros((B, P), dtype=np.int64)
    out[r, slot] = c
    return out, count
