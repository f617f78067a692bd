"""The kind `mecab`: WordPiece on MeCab words, the ids of transformers' BertJapaneseTokenizer.

The Tohoku Japanese BERT recipe: NFKC, MeCab (unidic-lite) words, lower-cased when the vocab
is, then greedy longest-match WordPiece inside each word (the same WordPiece as
vocab/core/fast_wordpiece.py). So no piece ever crosses a MeCab word boundary, and a vocab folder
whose tokenizer_config.json says so (JAPANESE_TOKENIZER) loads with
`transformers.AutoTokenizer.from_pretrained(folder)` and gives these same ids. Trained by
`pipeline --lang ja vocab` (ja's segmenter is MeCab; `--word-segmenter none` gives the
`wordpiece` kind instead): sentencepiece on MeCab's words (pieces may mix scripts, "住ん"),
converted with only whitespace splitting a piece; the alphabet is NFKC's. A MeCab word starts a
word for whole-word masking, whatever segmenter the language names.

Its fast form (tokenizer.json, written beside vocab.txt in an export) cannot run MeCab: it is
NFKC (lower-cased when the vocab is), a split at whitespace and the same WordPiece, so on text
already split into MeCab words (`spec.fast_text(text)`: the words joined by spaces) it gives
these ids. transformers loads the folder as BertJapaneseTokenizer (MeCab itself, raw text) for
BERT, RoBERTa and DistilBERT; for ModernBERT its AutoTokenizer always takes tokenizer.json, so
give that one the split text.

Usage:
    words = mecab_words("東京都に住んでいる。")          # ['東京', '都', 'に', '住ん', 'で', 'いる', '。']
    spec.fast_text("東京[MASK]に住む")                     # '東京 [MASK] に 住む': for tokenizer.json
    wp = MecabWordPiece(load_tokenizer("data/ja/vocab"))   # its encoder: spec.encoder()
    ids, counts, starts = wp.encode_words(text)           # starts: first piece of each word
    wp.tokenize("東京都に住んでいる。")
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from tokenizers import normalizers, pre_tokenizers

from vocab.core.bert_tokenizer import make_fast_tokenizer
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.core.layout import DEFAULT_MAX_LENGTH, TrainingError, VocabError, read_case_setting, read_vocab_txt
from vocab.core.segmenters import MecabSegmenter, load_segmenter
from vocab.kinds.base import Found
from vocab.kinds.wordpiece import VocabSpec

SEGMENTER = MecabSegmenter.name
# transformers' Japanese BERT tokenizer: MeCab through fugashi on unidic-lite, NFKC first
JAPANESE_TOKENIZER = {
    "tokenizer_class": "BertJapaneseTokenizer",
    "word_tokenizer_type": "mecab",
    "subword_tokenizer_type": "wordpiece",
    "mecab_kwargs": {"mecab_dic": "unidic_lite"},
}


@dataclass(frozen=True)
class MecabVocab(VocabSpec):
    """A vocab.txt on MeCab words (see the module doc)."""

    kind = "mecab"
    description = ("WordPiece on MeCab words (transformers' BertJapaneseTokenizer): `pipeline --lang "
                   "ja vocab`")
    split_by_script = False   # a MeCab word mixes scripts ("住ん": kanji + kana)

    @classmethod
    def claims(cls, found: Found) -> bool:
        return found.vocab_txt is not None and found.config.get("tokenizer_class") == "BertJapaneseTokenizer"

    @classmethod
    def load(cls, found: Found) -> MecabVocab:
        cfg, where = found.config, found.folder / "tokenizer_config.json"
        words = cfg.get("word_tokenizer_type", "basic")
        dic = (cfg.get("mecab_kwargs") or {}).get("mecab_dic", "ipadic")
        if words != "mecab" or dic != "unidic_lite" or cfg.get("subword_tokenizer_type", "wordpiece") != "wordpiece":
            raise VocabError(f"{where}: a BertJapaneseTokenizer with {words} words "
                             f"({dic}) is not supported: only MeCab words with unidic_lite and wordpiece")
        lower_case, _ = read_case_setting(found.folder)
        return cls(vocab_file=found.vocab_txt, tokens=read_vocab_txt(found.vocab_txt), lower_case=lower_case)

    def fingerprint_extra(self) -> dict:
        return {"word_tokenizer": SEGMENTER}

    def word_segmenter(self, default):
        return SEGMENTER

    def words_from(self, segmenter):
        return SEGMENTER

    def make_encoder(self, segmenter):
        return MecabWordPiece(self)

    def fast_tokenizer(self):
        """WordPiece on words split at whitespace, after NFKC (and lower-casing): MeCab's words
        once `fast_text` has split the text (see the module doc)."""
        steps = [normalizers.NFKC()] + ([normalizers.Lowercase()] if self.lower_case else [])
        return make_fast_tokenizer(self, normalizers.Sequence(steps), pre_tokenizers.WhitespaceSplit())

    def fast_text(self, text: str) -> str:
        """MeCab's words of `text` joined by spaces, its special tokens ([MASK], ...) kept whole."""
        specials = [t for t in self.tokens if self.is_special(t) and t in text]
        if not specials:
            return " ".join(mecab_words(text))
        parts = re.split("(" + "|".join(map(re.escape, specials)) + ")", text)
        return " ".join(p if p in specials else " ".join(mecab_words(p)) for p in parts if p.strip())

    def word_pieces(self, sentences, segmenter=None, batch_size=1000):
        wp = MecabWordPiece(self)
        for text in sentences:
            yield text, wp.words_ids(text)

    def word_ids(self, words):
        wp = MecabWordPiece(self)
        return [wp.tokenize(w) for w in words]

    @classmethod
    def tokenizer_config(cls, lower_case, strip_accents, model_max_length=DEFAULT_MAX_LENGTH) -> dict:
        if strip_accents:
            raise VocabError("a MeCab vocab cannot strip accents (transformers' Japanese "
                             "tokenizer has no such option): leave out --strip-accents")
        return {**JAPANESE_TOKENIZER, "do_lower_case": bool(lower_case),
                "model_max_length": model_max_length,
                "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                "cls_token": "[CLS]", "mask_token": "[MASK]"}

    # -- training -----------------------------------------------------------------------------
    @classmethod
    def trains(cls, model_type, segmenter) -> bool:
        return model_type in cls.model_types and segmenter == SEGMENTER

    @classmethod
    def check_training(cls, vocab_size, from_spm, strip_accents, segmenter) -> None:
        if strip_accents:
            raise TrainingError("--strip-accents does not go with MeCab words (transformers' Japanese "
                                "tokenizer keeps accents): leave it out, or pass --word-segmenter none")

    @classmethod
    def sample_words(cls, lower_case, strip_accents, segmenter):
        return MecabWords(lower_case)

    @classmethod
    def conversion_split(cls, lower_case, strip_accents):
        return str.split


@dataclass(frozen=True)
class MecabWords:
    """The words a MeCab vocab is trained on (vocab/training/words.py's interface)."""

    lower_case: bool = False

    def char_normalizer(self) -> NfkcCharNormalizer:
        return NfkcCharNormalizer(self.lower_case)

    def count(self, sentences: Iterable[str]) -> Counter:
        counts: Counter = Counter()
        for s in sentences:
            counts.update(mecab_words(s, self.lower_case))
        return counts


_WORD_CACHE_LIMIT = 500_000   # distinct words remembered (their ids)


def mecab_words(text: str, lower_case: bool = False) -> list[str]:
    """The words BertJapaneseTokenizer's MecabTokenizer makes of `text` (NFKC first)."""
    words = load_segmenter(SEGMENTER).words(unicodedata.normalize("NFKC", text))
    return [w.lower() for w in words] if lower_case else words


class NfkcCharNormalizer:
    """What a MeCab vocab's WordPiece sees of one character (NFKC, lower-cased when asked):
    the `char` of vocab.core.normalizer.CharNormalizer, for the alphabet."""

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

    def __init__(self, spec):
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
        per line, and True at the first piece of each MeCab word (vocab/core/word_starts.py)."""
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
