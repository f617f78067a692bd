"""Word segmenters for scripts written without spaces: MeCab (Japanese), jieba (Chinese),
PyThaiNLP (Thai). Each is a pip package, imported only when a segmenter is first asked for.

A segmenter turns text into its words (whitespace dropped); `spans` gives their character
offsets in the text. The name a language uses comes from its settings
(pipeline/text/languages/{lang}.json, key "word_segmenter", read by
pipeline.text.language_settings.word_segmenter); stages take `--word-segmenter` to override
it, `none` to switch it off.

The MeCab segmenter is the one transformers' BertJapaneseTokenizer builds for
`mecab_kwargs={"mecab_dic": "unidic_lite"}` (fugashi.GenericTagger on unidic-lite's
dictionary and its mecabrc), so words here are the words of the exported tokenizer.

Usage:
    seg = load_segmenter("jieba")          # SegmenterError with a one-line fix if missing
    seg.words("我们在北京大学学习")         # ['我们', '在', '北京大学', '学习']
    seg.spans("ภาษาไทย ง่าย")               # [(0, 7), (8, 12)]
"""
from __future__ import annotations

import importlib
import logging
import os
from functools import cache

NONE = "none"
# name -> (pip packages, what it segments)
SEGMENTERS = {
    "mecab": ("fugashi unidic-lite", "Japanese"),
    "jieba": ("jieba", "Chinese"),
    "pythainlp": ("pythainlp", "Thai"),
}
CHOICES = (*SEGMENTERS, NONE)
# Those whose words cut a vocab's training sample before BERT's split: BERT leaves a whole
# Japanese or Thai clause as one word (Chinese is one token per character anyway).
CUTS_SAMPLE = frozenset({"mecab", "pythainlp"})


class SegmenterError(ValueError):
    """A segmenter cannot be used (package missing, unknown name, failure on a text)."""


def _import(name: str, *modules: str) -> list:
    """The modules a segmenter needs, or a SegmenterError that says what to pip install."""
    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as exc:
        packages, script = SEGMENTERS[name]
        raise SegmenterError(
            f"the {script} word segmenter {name!r} needs {packages} ({exc}): pip install "
            f"{packages}  (or pip install 'wiki2bert[cjk]'), or pass --word-segmenter none") from None


class Segmenter:
    """Words of a text; subclasses give `_words`."""

    name = ""

    def words(self, text: str) -> list[str]:
        return [w for w in self._words(text) if w and not w.isspace()]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each word in `text`, found left to right (words are substrings)."""
        out, pos = [], 0
        for w in self.words(text):
            start = text.find(w, pos)
            if start < 0:   # the segmenter changed the text: no offsets to give
                raise SegmenterError(f"{self.name} returned {w!r}, which is not in the text")
            pos = start + len(w)
            out.append((start, pos))
        return out

    def _words(self, text: str) -> list[str]:   # pragma: no cover - abstract
        raise NotImplementedError


class MecabSegmenter(Segmenter):
    name = "mecab"

    def __init__(self):
        fugashi, unidic_lite = _import(self.name, "fugashi", "unidic_lite")
        dic = unidic_lite.DICDIR
        self._tagger = fugashi.GenericTagger(f'-d "{dic}" -r "{os.path.join(dic, "mecabrc")}" ')

    def _words(self, text: str) -> list[str]:
        return [w.surface for w in self._tagger(text)]


class JiebaSegmenter(Segmenter):
    name = "jieba"

    def __init__(self):
        (jieba,) = _import(self.name, "jieba")
        jieba.setLogLevel(logging.WARNING)   # no "Building prefix dict..." on every worker
        self._tok = jieba.Tokenizer()

    def _words(self, text: str) -> list[str]:
        return self._tok.lcut(text, HMM=True)


class ThaiSegmenter(Segmenter):
    name = "pythainlp"

    def __init__(self):
        (tokenize,) = _import(self.name, "pythainlp.tokenize")
        self._tokenize = tokenize.word_tokenize

    def _words(self, text: str) -> list[str]:
        # newmm is PyThaiNLP's default engine (dictionary maximal matching)
        return self._tokenize(text, engine="newmm", keep_whitespace=False)


_CLASSES = {"mecab": MecabSegmenter, "jieba": JiebaSegmenter, "pythainlp": ThaiSegmenter}


@cache
def load_segmenter(name: str) -> Segmenter:
    """The segmenter called `name` (one per process: loading a dictionary takes a second)."""
    if name not in _CLASSES:
        raise SegmenterError(f"unknown word segmenter {name!r}: use one of {', '.join(CHOICES)}")
    return _CLASSES[name]()

