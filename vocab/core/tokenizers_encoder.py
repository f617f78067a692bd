"""A transformers fast tokenizer's ids and word starts for whole shards, as `pipeline encode` asks
(the encoder of the fast tokenizer kinds, vocab/kinds/fast.py).

`TokenizerEncoder` runs the Rust `tokenizers` library on a block of lines at once
(`encode_batch`, no special tokens added) and takes word starts from the tokenizer's own word
ids: a token starts a word when its word id differs from the token before it (a line's first
token always does). With a segmenter (Chinese, Japanese, Thai) the segmenter's words decide
instead, by the rule of vocab/core/word_starts.py. The ids are AutoTokenizer's for each line with
`add_special_tokens=False`, except that text spelling a special token ("<s>", "[CLS]") stays
text, as transformers' `split_special_tokens=True` does: a sentence never yields a control id.

Usage:
    enc = TokenizerEncoder(spec, segmenter=None)      # spec.backend(): a tokenizers.Tokenizer
    ids, counts, starts = enc.encode_words("Első mondat.\\nMásodik.")
"""
from __future__ import annotations

from itertools import chain

import numpy as np

from vocab.core.segmenters import SegmenterError
from vocab.core.word_starts import token_starts


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
