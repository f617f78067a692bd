"""Dynamic (and whole-word) masking at training time, from the static HDF5 (docs/training.md).

The HDF5 holds one static masking per instance: its masked positions and `masked_lm_ids` give
back the original tokens. `DynamicMasker` restores them and draws new masks, a pure function of
(seed, epoch, the sample's global index): the same masks for any number of ranks, any batch
size and after a resume, with no RNG state to save.

    masker = DynamicMasker(load_tokenizer(vocab_dir), max_pred=20, seed=42, mlm_probability=0.15,
                           whole_word=False)
    arrays = masker.apply(arrays, epoch=0, sample_index=idx, source=path)   # in place

Rule (BERT's, as encode's static masks): candidates are the real tokens that are not special
tokens ([CLS], [SEP], [PAD], [UNK], [MASK], [unusedN]); `k = min(max_pred, max(1, round(p * n)))`
of the `n` candidates are chosen uniformly; each chosen token becomes [MASK] with probability
`mask_replace_prob` (0.8), a random real word piece with `random_replace_prob` (0.1), and stays
otherwise. With whole-word masking a word is a piece and the `##` pieces after it (or the
segmenter's word where the HDF5 has `word_starts`: Chinese, Japanese, Thai): words are taken
in random order, skipping one that would overshoot `k` (Google's rule), and the
80/10/10 choice is made once per word.

Random numbers come from a counter-based hash (murmur3's 32-bit finaliser) of a per-sample key
and the position, so that no generator is seeded per sample: vectorised over a whole chunk.
"""
from __future__ import annotations

import numpy as np

from pipeline.encoding.hdf5_format import maskable_tokens
from trainer.data.vocabulary import encode_vocab, load_spec
from vocab.core.fast_wordpiece import splitmix64
from vocab.core.layout import VocabError

CHUNK_ROWS = 4096  # rows masked at once: bounded temporaries whatever the piece size
_STREAM_CHOICE, _STREAM_KIND, _STREAM_PIECE = 1, 2, 3
_GOLDEN = np.uint32(0x9E3779B9)


class MaskingError(ValueError):
    """Dynamic masking cannot run: no vocab, too narrow an HDF5, or static masks that do not
    give back a valid sequence; the message says which file and what to do."""


def build_masker(config, seq_len: int, max_pred: int, packed: bool, spec=None, input_dir=None,
                 rate: float | None = None) -> "DynamicMasker | None":
    """The masker --masking dynamic asks for (None for static), checked before training starts;
    `packed`: rows of `encode --pack` (one [CLS], no pair's [SEP]s: more maskable tokens);
    `spec`: the run's tokenizer, already loaded (else the one encode recorded is read);
    `input_dir`, `rate`: a phase's folder and --mlm_probability (default: the config's)."""
    if config.masking != "dynamic":
        return None
    input_dir = config.input_dir if input_dir is None else input_dir
    rate = config.mlm_probability if rate is None else rate
    folders = list(input_dir.values()) if isinstance(input_dir, dict) else [input_dir]
    if spec is None:
        vocab = config.vocab_file or next(filter(None, map(encode_vocab, folders)), None)
        if vocab is None:
            raise MaskingError(f"--masking dynamic needs the vocab {' and '.join(map(str, folders))} "
                               "was encoded with (to know the special tokens and the ## pieces): pass "
                               "--vocab_file")
        try:
            spec = load_spec(vocab)
        except VocabError as exc:
            raise MaskingError(str(exc)) from None
    maskable = maskable_tokens(seq_len, packed)
    wanted = round(rate * maskable)
    if wanted > max_pred:
        raise MaskingError(
            f"--mlm_probability {rate:g} masks about {wanted} of {maskable} tokens "
            f"but the HDF5 rows hold at most {max_pred} predictions (max_pred): encode with "
            f"`pipeline encode --max-pred {wanted}` or lower --mlm_probability")
    return DynamicMasker(spec, max_pred, config.seed, rate, config.whole_word_masking,
                         config.mask_replace_prob, config.random_replace_prob)


def _fmix32(x: np.ndarray) -> np.ndarray:
    """murmur3's finaliser on uint32, in place (a bijection: distinct inputs, distinct keys)."""
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x85EBCA6B)
    x ^= x >> np.uint32(13)
    x *= np.uint32(0xC2B2AE35)
    x ^= x >> np.uint32(16)
    return x


def sample_keys(seed: int, epoch: int, sample_index: np.ndarray, stream: int) -> np.ndarray:
    """A uint32 key per sample from (seed, epoch, global sample index, stream)."""
    base = splitmix64(np.array([(seed & 0xFFFFFFFF) << 32 | (epoch & 0xFFFFFFFF)], dtype=np.uint64)
                      ^ np.uint64(stream * 0x632BE59BD9B4E019 & 0xFFFFFFFFFFFFFFFF))
    with np.errstate(over="ignore"):
        return (splitmix64(sample_index.astype(np.uint64) ^ base) >> np.uint64(32)).astype(np.uint32)


def position_hash(keys: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """uint32 [B, X]: the hash of each sample's key with each of its positions [B, X] (or [X])."""
    with np.errstate(over="ignore"):
        x = keys[:, None] + positions.astype(np.uint32) * _GOLDEN
    return _fmix32(x)


class DynamicMasker:
    """Restores the original tokens of HDF5 rows and masks them anew; see the module docstring."""

    def __init__(self, spec, max_pred: int, seed: int, mlm_probability: float = 0.15,
                 whole_word: bool = False, mask_replace_prob: float = 0.8,
                 random_replace_prob: float = 0.1):
        self.max_pred, self.seed = int(max_pred), int(seed)
        self.prob, self.whole_word = float(mlm_probability), bool(whole_word)
        self.mask_id = spec.mask_id
        self.vocab_size = spec.size
        self.special = np.array([spec.is_special(t) for t in spec.tokens], dtype=bool)
        self.continuation = np.array([spec.continues_word(t) for t in spec.tokens], dtype=bool)
        self.real_ids = np.flatnonzero(~self.special).astype(np.int32)
        self.not_text = self.special.copy()   # ids encode never masks ([UNK] is text it may mask)
        if spec.unk_id is not None:           # a byte-level BPE has no unknown token
            self.not_text[spec.unk_id] = False
        n_special = int(self.special.sum())
        self.first_real = n_special if not self.special[n_special:].any() else None
        if len(self.real_ids) == 0:
            raise MaskingError(f"{spec.folder} has no word pieces besides special tokens")
        # thresholds on a uint32 draw: below `to_mask` -> [MASK], below `to_random` -> random
        self.to_mask = np.uint64(round(mask_replace_prob * 2 ** 32))
        self.to_random = np.uint64(round((mask_replace_prob + random_replace_prob) * 2 ** 32))

    def settings(self) -> dict:
        """What decides the masks (saved with the loader state: a resume must not change it)."""
        return {"masking": "dynamic", "mlm_probability": self.prob, "whole_word_masking": self.whole_word,
                "mask_replace_prob": int(self.to_mask) / 2 ** 32,
                "random_replace_prob": (int(self.to_random) - int(self.to_mask)) / 2 ** 32}

    # -- restoring ---------------------------------------------------------------------------
    def restore(self, arrays: dict, source) -> np.ndarray:
        """The original token ids [B, L] (int32) of the rows; MaskingError if they do not restore."""
        ids = arrays["input_ids"].astype(np.int32, copy=True)
        pos = arrays["masked_lm_positions"].astype(np.int64)
        B, L = ids.shape
        if B == 0:
            return ids
        valid = _before_first_zero(pos)                      # NVIDIA's rule: up to the first 0

        def bad(what: str):
            return MaskingError(f"{source}: --masking dynamic cannot restore the original tokens "
                                f"({what}): re-encode it with `pipeline encode`, or train with "
                                "--masking static")

        if pos.max() >= L or pos.min() < 0:
            raise bad(f"a masked position is outside the sequence length {L}")
        orig = np.where(valid, arrays["masked_lm_ids"], 0)
        if orig.min() < 0 or orig.max() >= self.vocab_size:
            raise bad(f"a masked_lm_id is outside the vocab of {self.vocab_size} tokens")
        if self.not_text[orig[valid]].any():
            raise bad("a masked_lm_id is [PAD], [CLS], [SEP], [MASK] or [unusedN], never masked text")
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise bad(f"an input id is outside the vocab of {self.vocab_size} tokens")
        if not np.take_along_axis(_as_bool(arrays["input_mask"]), pos, axis=1)[valid].all():
            raise bad("a masked position lies in the padding")
        np.put_along_axis(ids, pos, np.where(valid, orig, np.take_along_axis(ids, pos, axis=1)), axis=1)
        if (ids == self.mask_id).any():
            raise bad("[MASK] tokens remain where masked_lm_ids should have restored the text")
        return ids

    # -- masking -------------------------------------------------------------------------------
    def apply(self, arrays: dict, epoch: int, sample_index: np.ndarray, source) -> dict:
        """New masks for the rows of `arrays` (in place), chunk by chunk; returns `arrays`."""
        n = len(arrays["input_ids"])
        for lo in range(0, n, CHUNK_ROWS):
            part = {k: v[lo:lo + CHUNK_ROWS] for k, v in arrays.items()}
            ids, positions, originals = self._mask_rows(part, epoch, sample_index[lo:lo + CHUNK_ROWS],
                                                        source)
            arrays["input_ids"][lo:lo + CHUNK_ROWS] = ids
            arrays["masked_lm_positions"][lo:lo + CHUNK_ROWS] = positions
            arrays["masked_lm_ids"][lo:lo + CHUNK_ROWS] = originals
        return arrays

    def _mask_rows(self, arrays: dict, epoch: int, index: np.ndarray, source):
        ids = self.restore(arrays, source)
        B, L = ids.shape
        P = self.max_pred
        # special tokens are never masked (BERT's layout puts them all first: one comparison)
        cand = ids >= self.first_real if self.first_real is not None else ~self.special[ids]
        cand &= _as_bool(arrays["input_mask"])
        k = np.minimum(P, np.maximum(1, np.rint(cand.sum(axis=1) * self.prob).astype(np.int64)))
        k *= cand.any(axis=1)                                   # a row with no candidate: none
        keys = position_hash(sample_keys(self.seed, epoch, index, _STREAM_CHOICE), np.arange(L))
        if self.whole_word:
            starts = self._word_starts(ids, cand, arrays.get("word_starts"))
            keys = np.take_along_axis(keys, starts, axis=1)     # one key per word
            positions, count = self._choose_words(keys, starts, cand, k)
            decide_at = np.take_along_axis(starts, positions, axis=1)  # 80/10/10 per word
        else:
            positions, count = self._choose_tokens(keys, cand, k)
            decide_at = positions
        valid = np.arange(P)[None, :] < count[:, None]
        positions = np.where(valid, positions, 0)
        originals = np.where(valid, np.take_along_axis(ids, positions, axis=1), 0)
        kind = position_hash(sample_keys(self.seed, epoch, index, _STREAM_KIND), decide_at)
        piece = position_hash(sample_keys(self.seed, epoch, index, _STREAM_PIECE), positions)
        random_piece = self.real_ids[piece % np.uint32(len(self.real_ids))]
        kind = kind.astype(np.uint64)
        new = np.where(kind < self.to_mask, self.mask_id,
                       np.where(kind < self.to_random, random_piece, originals))
        # padding slots point at position 0 ([CLS]) and write it back onto itself
        np.put_along_axis(ids, positions, np.where(valid, new, ids[:, :1]), axis=1)
        return ids, positions.astype(np.int32), originals.astype(np.int32)

    @staticmethod
    def _key_order(keys: np.ndarray, eligible: np.ndarray) -> np.ndarray:
        """[B, L] positions in the order of their keys, the eligible ones first. The position
        sits in a key's low bits: one uint32 sort (SIMD in numpy), no argsort, and no ties."""
        L = keys.shape[1]
        low = np.uint32((1 << max(1, (L - 1).bit_length())) - 1)
        order = ((keys >> np.uint32(1)) & ~low) | np.arange(L, dtype=np.uint32)
        order[~eligible] |= np.uint32(0x80000000)
        order.sort(axis=1)
        return (order & low).astype(np.int64)

    def _choose_tokens(self, keys: np.ndarray, cand: np.ndarray, k: np.ndarray):
        """The k candidates with the smallest keys per row, ascending; padded past k."""
        P, L = self.max_pred, keys.shape[1]
        picked = self._key_order(keys, cand)[:, :P]
        picked[np.arange(P)[None, :] >= k[:, None]] = L
        picked.sort(axis=1)
        return picked, k

    def _word_starts(self, ids: np.ndarray, cand: np.ndarray, flags=None) -> np.ndarray:
        """[B, L] the position where each position's word starts: a ## piece joins the word
        before it, or, where encode stored a segmenter's `word_starts` (Chinese, Japanese,
        Thai), a 0 there does; never across a non-candidate such as [SEP]."""
        B, L = ids.shape
        prev = np.zeros_like(cand)
        prev[:, 1:] = cand[:, :-1]
        joins = self.continuation[ids] if flags is None else (flags == 0)
        start = ~(joins & prev & cand)
        return np.maximum.accumulate(np.where(start, np.arange(L), 0), axis=1)

    def _choose_words(self, keys, starts, cand, k):
        """Whole words in key order, skipping one that would overshoot k; ascending positions."""
        B, L = keys.shape
        is_start = (starts == np.arange(L)) & cand
        flat = (np.arange(B)[:, None] * (L + 1) + np.where(cand, starts, L)).ravel()
        size = np.bincount(flat, minlength=B * (L + 1)).reshape(B, L + 1)[:, :L]
        order = self._key_order(keys, is_start)                # word starts in random order
        size_sorted = np.take_along_axis(size, order, axis=1)
        n_words = is_start.sum(axis=1)
        size_sorted[np.arange(L)[None, :] >= n_words[:, None]] = 0
        # the smallest word still to come: a row stops once none of them fits
        big = np.where(size_sorted > 0, size_sorted, L + 1)
        smallest_after = np.minimum.accumulate(big[:, ::-1], axis=1)[:, ::-1]
        take = np.zeros((B, L), dtype=bool)
        total = np.zeros(B, dtype=np.int64)
        for r in range(int(n_words.max(initial=0))):
            s = size_sorted[:, r]
            ok = (s > 0) & (total + s <= k)
            take[:, r] = ok
            total += np.where(ok, s, 0)
            if r + 1 == L or not (total + smallest_after[:, r + 1] <= k).any():
                break
        chosen_start = np.zeros((B, L), dtype=bool)
        np.put_along_axis(chosen_start, order, take, axis=1)
        chosen = np.take_along_axis(chosen_start, starts, axis=1) & cand
        count = chosen.sum(axis=1)
        r, c = np.nonzero(chosen)
        first = np.zeros(B + 1, dtype=np.int64)
        np.cumsum(count, out=first[1:])
        positions = np.zeros((B, self.max_pred), dtype=np.int64)
        positions[r, np.arange(len(r)) - first[r]] = c
        return positions, count


def _before_first_zero(positions: np.ndarray) -> np.ndarray:
    """[B, P] True at the slots before each row's first 0 (its real predictions)."""
    zero = positions == 0
    count = np.where(zero.any(axis=1), zero.argmax(axis=1), positions.shape[1])
    return np.arange(positions.shape[1])[None, :] < count[:, None]


def _as_bool(mask: np.ndarray) -> np.ndarray:
    """A 0/1 int8 mask as bool without a copy (other dtypes converted)."""
    return mask.view(bool) if mask.dtype.itemsize == 1 else mask.astype(bool)

