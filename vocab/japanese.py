"""Japanese on MeCab words: the ids of transformers' BertJapaneseTokenizer, for whole shards.

The Tohoku Japanese BERT recipe: NFKC, MeCab (unidic-lite) words, lower-cased when the vocab
is, then greedy longest-match WordPiece inside each word (the same WordPiece as
vocab/fast_wordpiece.py). So no piece ever crosses a MeCab word boundary, and a vocab folder
whose tokenizer_config.json says so (vocab.spec.tokenizer_config(word_tokenizer="mecab"))
loads with `transformers.AutoTokenizer.from_pretrained(folder)` and gives these same ids.

Usage:
    words = mecab_words("東京都に住んでいる。")          # ['東京', '都', 'に', '住ん', 'で', 'いる', '。']
    wp = MecabWordPiece(load_vocab("data/ja/vocab"))     # spec.word_tokenizer == "mecab"
    ids, counts = wp.encode_text("一行目。\\n二行目。")     # as FastWordPiece.encode_text
    ids, counts, starts = wp.encode_words(text)           # starts: first piece of each word
    wp.tokenize("東京都に住んでいる。")
"""
from __future__ import annotations

import unicodedata

import numpy as np

from .fast_wordpiece import FastWordPiece
from .segmenters import load_segmenter
from .spec import VocabSpec

_WORD_CACHE_LIMIT = 500_000   # distinct words remembered (their ids)


def mecab_words(text: str, lower_case: bool = False) -> list[str]:
    """The words BertJapaneseTokenizer's MecabTokenizer makes of `text` (NFKC first)."""
    words = load_segmenter("mecab").words(unicodedata.normalize("NFKC", text))
    return [w.lower() for w in words] if lower_case else words


class NfkcCharNormalizer:
    """What a MeCab vocab's WordPiece sees of one character (NFKC, lower-cased when asked):
    the `char` of vocab.normalizer.CharNormalizer, for the alphabet."""

    def __init__(self, lower_case: bool = False):
        self.lower_case = lower_case
        self._chars: dict[str, str] = {}

    def char(self, c: str) -> str:
        n = self._chars.get(c)
        if n is None:
            n = unicodedata.normalize("NFKC", c)
            n = self._chars[c] = n.lower() if self.lower_case else n
        return n


class MecabWordPiece:
    """encode_text / tokenize of FastWordPiece, on MeCab words (see the module doc)."""

    def __init__(self, spec: VocabSpec):
        self.spec = spec
        self._wp = FastWordPiece(spec)
        self._ids: dict[str, tuple[int, ...]] = {}

    def words_ids(self, text: str) -> list[tuple[str, tuple[int, ...]]]:
        """Each MeCab word of `text` with its ids."""
        words = mecab_words(text, self.spec.lower_case)
        cache = self._ids
        if len(cache) > _WORD_CACHE_LIMIT:
            cache.clear()
        new = [w for w in dict.fromkeys(words) if w not in cache]
        if new:
            cache.update(zip(new, self._wp._wordpieces(new)))
        return [(w, cache[w]) for w in words]

    def tokenize(self, text: str) -> list[int]:
        return [i for _, ids in self.words_ids(text) for i in ids]

    def encode_words(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, ids per line, starts) for `text` split at "\\n": all ids (int32), their number
        per line, and True at the first piece of each MeCab word (vocab/word_starts.py)."""
        flat: list[int] = []
        starts: list[bool] = []
        counts = []
        for line in text.split("\n"):
            n = 0
            for _, ids in self.words_ids(line):
                flat.extend(ids)
                starts.append(True)
                starts.extend([False] * (len(ids) - 1))
                n += len(ids)
            counts.append(n)
        return (np.array(flat, dtype=np.int32), np.array(counts, dtype=np.int64),
                np.array(starts, dtype=bool))

    def encode_text(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids, counts) for `text` split at "\\n": all ids (int32) and the number per line."""
        ids, counts, _ = self.encode_words(text)
        return ids, counts
