"""Text to ids with any vocabulary, as `pipeline encode` does: one entry point for both specs.

`shard_encoder(spec, segmenter)` gives the object encode tokenises shards with (one per process
and vocabulary, so caches carry over between shards): FastWordPiece for a BERT vocab.txt
(MecabWordPiece on MeCab words, SegmentedWordPiece with a word segmenter), `TokenizerEncoder`
for a transformers fast tokenizer (vocab/hf_tokenizer.py). Each has `encode_text(text) -> (ids,
ids per line)`; those that know words also `encode_words(text) -> (ids, ids per line, starts)`.

`TokenizerEncoder` runs the Rust `tokenizers` library on a block of lines at once
(`encode_batch`, no special tokens added) and takes word starts from the tokenizer's own word
ids: a token starts a word when its word id differs from the token before it (a line's first
token always does). With a segmenter (Chinese, Japanese, Thai) the segmenter's words decide
instead, by the rule of vocab/word_starts.py. The ids are AutoTokenizer's for each line with
`add_special_tokens=False`, except that text spelling a special token ("<s>", "[CLS]") stays
text, as transformers' `split_special_tokens=True` does: a sentence never yields a control id.

`encode_words(spec, words)` gives the pieces of each word, without special tokens, each word
taken as a text of its own (as at the start of a sentence): what the trainer's vocabulary
adaptation asks of the old tokenizer for each new token's text.

Usage:
    enc = shard_encoder(load_tokenizer_spec("xlm-roberta-base"))
    ids, counts, starts = enc.encode_words("Első mondat.\\nMásodik.")
    encode_words(spec, ["Árvíztűrő", "tükörfúrógép"])        # [[...], [...]]
"""
from __future__ import annotations

from itertools import chain

import numpy as np

from .spec import VocabSpec

_CACHE: dict = {}


def shard_encoder(spec, segmenter: str | None = None):
    """The encoder of `spec` (with word starts from `segmenter`, a name of vocab/segmenters.py),
    one per process: the last one asked for is kept."""
    key = (type(spec).__name__, str(spec.folder), spec.fingerprint, spec.size, spec.lower_case,
           spec.strip_accents, segmenter)
    enc = _CACHE.get(key)
    if enc is None:
        _CACHE.clear()
        enc = _make_encoder(spec, segmenter)
        _CACHE[key] = enc
    return enc


def _make_encoder(spec, segmenter):
    from .segmenters import load_segmenter

    if not isinstance(spec, VocabSpec):
        return TokenizerEncoder(spec, load_segmenter(segmenter) if segmenter else None)
    if spec.word_tokenizer == "mecab":
        from .japanese import MecabWordPiece
        return MecabWordPiece(spec)
    if segmenter is not None:
        from .word_starts import SegmentedWordPiece
        return SegmentedWordPiece(spec, load_segmenter(segmenter))
    from .fast_wordpiece import FastWordPiece
    return FastWordPiece(spec)


class TokenizerEncoder:
    """A fast tokenizer's ids and word starts for many lines at once (see the module doc)."""

    def __init__(self, spec, segmenter=None):
        self.spec = spec
        self.segmenter = segmenter
        self._tok = spec.backend()

    def encode_words(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, ids per line, starts) for `text` split at "\\n": all ids (int32), their number
        per line (int64) and True where a token starts a word (bool)."""
        lines = text.split("\n")
        encs = self._tok.encode_batch(lines, add_special_tokens=False)
        counts = np.fromiter(map(len, encs), dtype=np.int64, count=len(encs))
        total = int(counts.sum())
        ids = np.fromiter(chain.from_iterable(e.ids for e in encs), dtype=np.int32, count=total)
        if self.segmenter is not None:
            starts = self._segmenter_starts(lines, encs, total)
        else:
            starts = _word_id_starts(encs, counts, total)
        return ids, counts, starts

    def _segmenter_starts(self, lines, encs, total) -> np.ndarray:
        from .segmenters import SegmenterError
        from .word_starts import token_starts

        out = []
        for line, enc in zip(lines, encs):
            if not len(enc):
                continue
            try:
                spans = self.segmenter.spans(line)
            except SegmenterError:
                raise
            except Exception as exc:   # a segmenter's own failure on this text
                raise SegmenterError(f"{self.segmenter.name} failed ({exc!r}) on: {line[:80]!r}") from None
            out.append(token_starts(enc.offsets, spans))
        return np.fromiter(chain.from_iterable(out), dtype=bool, count=total)

    def encode_text(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        ids, counts, _ = self.encode_words(text)
        return ids, counts

    def tokenize(self, text: str) -> list[int]:
        """The ids of one text (no special tokens)."""
        return self._tok.encode(text, add_special_tokens=False).ids


def _word_id_starts(encs, counts: np.ndarray, total: int) -> np.ndarray:
    """True where a token's word id differs from the previous token's, and at each line's start."""
    try:
        words = np.fromiter(chain.from_iterable(e.word_ids for e in encs), dtype=np.int64, count=total)
    except TypeError:   # a token of no word (None): a word of its own
        words = np.array([-1 if w is None else w for e in encs for w in e.word_ids], dtype=np.int64)
        none = words < 0
        words[none] = -1 - np.flatnonzero(none)   # distinct from its neighbours
    starts = np.ones(total, dtype=bool)
    starts[1:] = words[1:] != words[:-1]
    first = np.cumsum(counts) - counts
    starts[first[counts > 0]] = True
    return starts


def encode_words(spec, words) -> list[list[int]]:
    """The pieces of each word without special tokens, with either spec: each word is encoded
    as a text of its own (as at the start of a sentence: "▁word", "Ġword" where the tokenizer
    adds a prefix space), as `pipeline encode` would encode it."""
    words = list(words)
    if not words:
        return []
    if isinstance(spec, VocabSpec):
        if spec.word_tokenizer == "mecab":
            from .japanese import MecabWordPiece

            wp = MecabWordPiece(spec)
            return [wp.tokenize(w) for w in words]
        from .tokenizer import make_tokenizer

        tok = make_tokenizer(spec)
    else:
        tok = spec.backend()
    return [e.ids for e in tok.encode_batch(words, add_special_tokens=False)]
