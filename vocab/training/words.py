"""The words a vocabulary is trained on: BERT's split, after the case setting.

sentencepiece learns its pieces from word counts (`word<TAB>count`, vocab/training/sample.py), so
no piece can ever cross a split that WordPiece makes: the words are those of BERT's normaliser
and basic pre-tokenizer (whitespace, each punctuation mark, each CJK character). A language
whose segmenter cuts the sample (vocab.core.segmenters.CUTS_SAMPLE: Thai, Japanese in a joint
vocab) has its text cut at the segmenter's words first, so no piece crosses one of its words
either. A kind that trains on other words (MeCab's: vocab/kinds/mecab.py) gives its own object
with the same two methods; each is picklable, so the stage's workers count where the files are.

Usage:
    words = BertWords(lower_case=False, strip_accents=False, cut_at="pythainlp")
    words.count(["Első mondat.", "Második."])        # Counter({"Első": 1, "mondat": 1, ".": 2, ...})
    words.char_normalizer().char("Á")                 # each character as the vocab sees it
    bert_words("Első mondat.", CharNormalizer())      # ["Első", "mondat", "."]
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from vocab.core.normalizer import CharNormalizer, split_kind
from vocab.core.segmenters import CUTS_SAMPLE, load_segmenter

CHUNK_CHARS = 1 << 20


@dataclass(frozen=True)
class BertWords:
    """BERT's words of a text, after the case setting; `cut_at`: a segmenter whose words cut
    the text first (None: none, or one that need not: see the module doc)."""

    lower_case: bool = False
    strip_accents: bool = False
    cut_at: str | None = None

    @classmethod
    def of(cls, lower_case: bool, strip_accents: bool, segmenter: str | None) -> BertWords:
        """The words for a language with `segmenter`: cut at its words where it cuts the sample."""
        return cls(lower_case, strip_accents, segmenter if segmenter in CUTS_SAMPLE else None)

    def char_normalizer(self) -> CharNormalizer:
        return CharNormalizer(self.lower_case, self.strip_accents)

    def count(self, sentences: Iterable[str], chunk_chars: int = CHUNK_CHARS) -> Counter:
        """Word counts of `sentences` (in chunks; joining sentences with a newline changes
        nothing, since whitespace is a split anyway)."""
        if self.cut_at is not None:
            seg = load_segmenter(self.cut_at)
            sentences = (" ".join(seg.words(s)) for s in sentences)
        norm = self.char_normalizer()
        counts: Counter = Counter()
        buf: list[str] = []
        size = 0
        for s in sentences:
            buf.append(s)
            size += len(s)
            if size >= chunk_chars:
                counts.update(bert_words("\n".join(buf), norm))
                buf, size = [], 0
        if buf:
            counts.update(bert_words("\n".join(buf), norm))
        return counts


def count_words(sentences: Iterable[str], lower_case: bool = False, strip_accents: bool = False) -> Counter:
    """BERT's word counts of `sentences` (BertWords(lower_case, strip_accents).count)."""
    return BertWords(lower_case, strip_accents).count(sentences)


_KIND_CLASS = {"punct": "p", "space": "s"}


def _char_class(char: str) -> str:
    """"p" (punctuation: a word of its own), "s" (whitespace: a split) or "w" (word char)."""
    return _KIND_CLASS.get(split_kind(char), "w")


def _word_pattern(chars: Iterable[str]) -> re.Pattern:
    """A word of BERT's basic split on normalised text made of `chars`: one punctuation mark,
    or a run of anything but whitespace and punctuation (CJK is already space-padded)."""
    punct = "".join(sorted(c for c in chars if _char_class(c) == "p"))
    space = "".join(sorted(c for c in chars if _char_class(c) == "s"))
    if not punct:
        return re.compile(f"[^{re.escape(space)}]+") if space else re.compile(".+", re.S)
    return re.compile(f"[{re.escape(punct)}]|[^{re.escape(punct + space)}]+")


def bert_words(text: str, normalizer: CharNormalizer) -> list[str]:
    """The words BERT's normaliser + basic pre-tokenizer make of `text` (what
    make_pre_tokenizer returns), computed in C-speed string passes instead of Python tuples."""
    text = normalizer.text(text)
    chars = set(text)
    punct = "".join(sorted(c for c in chars if _char_class(c) == "p"))
    if all(c.isspace() == (_char_class(c) == "s") for c in chars):
        # Python's whitespace is the tokenizer's here (always, after BERT's normaliser):
        # pad each punctuation mark with spaces and let str.split do the rest.
        if punct:
            text = re.compile(f"([{re.escape(punct)}])").sub(r" \1 ", text)
        return text.split()
    return _word_pattern(chars).findall(text)
