"""Which tokens start a word, for scripts whose words a segmenter finds (Chinese, Thai, and
Japanese on a character vocab): the token ids stay those of BERT's tokenizer (one token per
CJK character, WordPiece in Thai runs), and a segmenter word and the pieces of a BERT word are
grouped together, so whole-word masking and "subwords per word" see real words.

The rule: a token starts a word when its first character starts a segmenter word (a `##` piece
too: BERT leaves a whole Thai clause as one word, whose pieces follow PyThaiNLP's words). A
segmenter word is thus never split; where a token crosses a segmenter boundary (a Thai piece
over two words, a Latin word jieba cut in two) the words on both sides form one group.

Usage:
    sw = SegmentedWordPiece(spec, load_segmenter("jieba"))
    ids, counts, starts = sw.encode_words("北京大学。\\n我们学习。")   # starts: bool per id
    groups = word_groups(ids, starts)                                 # [[id, ...], ...]
"""
from __future__ import annotations

import numpy as np

from vocab.core.bert_tokenizer import make_tokenizer
from vocab.core.segmenters import Segmenter, SegmenterError


def token_starts(offsets, word_spans) -> list[bool]:
    """The rule of the module doc, for one text: token character offsets (start, end) and the
    segmenter's word spans in the same text."""
    word_begins = {a for a, _ in word_spans}
    return [a in word_begins for a, _ in offsets]


def word_groups(ids, starts) -> list[list[int]]:
    """The ids split into words: a start and the tokens after it up to the next start (a
    first token that is no start still opens a word)."""
    groups: list[list[int]] = []
    for i, s in zip(ids, starts):
        if s or not groups:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


class SegmentedWordPiece:
    """BERT's WordPiece ids (the Hugging Face tokenizer of the vocab) with word starts."""

    def __init__(self, spec, segmenter: Segmenter):
        self.spec = spec
        self.segmenter = segmenter
        self._tok = make_tokenizer(spec)

    def encode_words(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, ids per line, starts) for `text` split at "\\n" (as FastWordPiece.encode_text)."""
        lines = text.split("\n")
        encs = self._tok.encode_batch(lines, add_special_tokens=False)
        flat: list[int] = []
        starts: list[bool] = []
        counts = []
        for line, enc in zip(lines, encs):
            ids = enc.ids
            try:
                spans = self.segmenter.spans(line) if ids else []
            except SegmenterError:
                raise
            except Exception as exc:   # a segmenter's own failure on this text
                raise SegmenterError(f"{self.segmenter.name} failed ({exc!r}) on: {line[:80]!r}") from None
            flat.extend(ids)
            starts.extend(token_starts(enc.offsets, spans))
            counts.append(len(ids))
        return (np.array(flat, dtype=np.int32), np.array(counts, dtype=np.int64),
                np.array(starts, dtype=bool))

    def encode_text(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        ids, counts, _ = self.encode_words(text)
        return ids, counts
