"""TurkuNLP-style document rules: each looks at a document's statistics and keeps it or drops
it with a reason (datatrove style), so the reasons can be counted.

Case is judged per script: the upper-case rule counts only the cased letters of the
document's main script that are in the language's alphabet, so a caseless script (Japanese,
Bengali, Arabic) with Latin acronyms (JR, NHK) is never "shouting", even where a learned
alphabet took in Latin, and a Latin acronym inside Cyrillic text counts as a foreign letter,
not as upper case.

Words are counted per script: a run of letters/digits with at least one letter is a word in
scripts that put spaces between words; in CJK, Thai, Lao, Khmer, Myanmar and Tibetan text each
character counts as a word (otherwise a whole Chinese sentence would be one "word" and the
rules would reject every document), unless a word segmenter is given (`segment`: text -> words,
vocab/core/segmenters.py through the filter stage): then text in those scripts counts its
segmenter words that hold a letter.

Usage:
    settings = FilterSettings(alphabet=set("abc..."), min_words=10)
    stats = DocStats.of(["First sentence.", "Second one."], settings.alphabet)
    reason = first_failure(stats, settings)   # None to keep, else e.g. "digit_ratio"
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache

from .language_settings import language_settings

# Scripts written without spaces between words: one character is one word.
UNSPACED_RANGES = (
    "\u0e00-\u0eff"          # Thai, Lao
    "\u0f00-\u0fff"          # Tibetan
    "\u1000-\u109f"          # Myanmar
    "\u1780-\u17ff"          # Khmer
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002ffff"   # CJK ideographs, kana, bopomofo
)
_UNSPACED_CHAR = re.compile(f"[{UNSPACED_RANGES}]")
# A whitespace-delimited token with a letter in it: one match per such token (the first
# letter, then the rest of the token), so "(Tokyo)," and "5-én" are one word, "1990" none.
_WORD = re.compile(r"[^\W\d_]\S*")
_HAS_LETTER = re.compile(r"[^\W\d_]")


def count_words(text: str, unspaced: int | None = None, segment=None) -> int:
    """Words of `text`: letter-bearing tokens in spaced scripts + characters in unspaced ones
    (with `segment`, a function text -> words: its letter-bearing words instead).

    `unspaced`: the number of unspaced-script characters in `text`, when already known.
    """
    if unspaced is None:
        unspaced = len(_UNSPACED_CHAR.findall(text))
    if unspaced and segment is not None:
        return sum(1 for w in segment(text) if _HAS_LETTER.search(w))
    if unspaced:
        text = _UNSPACED_CHAR.sub(" ", text)
    return _WORD.subn("", text)[1] + unspaced   # the count without a list of the words


def char_counts(text: str) -> dict[str, int]:
    """How often each character occurs in `text` (numpy: ~10x faster than Counter)."""
    import numpy as np

    if not text:
        return {}
    codes, counts = np.unique(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32),
                              return_counts=True)
    return dict(zip(map(chr, codes.tolist()), counts.tolist()))


@lru_cache(maxsize=65536)
def is_unspaced(c: str) -> bool:
    return _UNSPACED_CHAR.match(c) is not None


@lru_cache(maxsize=65536)
def char_class(c: str) -> str:
    """'L' letter or mark, 'U' upper-case letter, 'l' lower-case, 'D' digit, 'P' punctuation,
    'S' space, 'O' other."""
    cat = unicodedata.category(c)
    if cat == "Lu" or cat == "Lt":
        return "U"
    if cat == "Ll":
        return "l"
    if cat[0] in "LM":
        return "L"
    if cat == "Nd":
        return "D"
    if cat[0] == "P":
        return "P"
    if cat[0] == "Z" or c.isspace():
        return "S"
    return "O"


@dataclass
class DocStats:
    sentences: int
    words: int
    no_word_sentences: int
    chars: int            # non-space characters
    letters: int          # letters and marks, any case
    cased: int            # upper + lower-case letters of the alphabet (all, without one)
    upper: int            # upper-case letters of the alphabet
    digits: int
    punct: int
    foreign: int          # letters outside the alphabet

    @classmethod
    def of(cls, sentences: list[str], alphabet: frozenset | set | None,
           segment=None) -> DocStats:
        """`segment`: a word segmenter (text -> words) for scripts without spaces, or None."""
        text = "\n".join(sentences)
        classes = Counter()
        foreign = unspaced = 0
        own_cased: list[tuple[str, str, int]] = []   # (script, class, count) of own cased letters
        per_script: Counter = Counter()
        for c, n in char_counts(text).items():
            k = char_class(c)
            classes[k] += n
            if k in "UlL":
                script = script_of(c)
                per_script[script] += n
                if alphabet is not None and c not in alphabet:
                    foreign += n
                elif k != "L":
                    own_cased.append((script, k, n))
                if is_unspaced(c):
                    unspaced += n
        # Case counts only in the document's main script, and only its letters of the alphabet:
        # a caseless main script (Japanese with "JR", "NHK") has no case to shout with.
        main = per_script.most_common(1)[0][0] if per_script else None
        cased = sum(n for script, _, n in own_cased if script == main)
        upper = sum(n for script, k, n in own_cased if script == main and k == "U")
        letters = classes["U"] + classes["l"] + classes["L"]
        return cls(
            sentences=len(sentences), words=count_words(text, unspaced, segment),
            no_word_sentences=sum(1 for s in sentences if not _HAS_LETTER.search(s)),
            chars=sum(classes.values()) - classes["S"], letters=letters,
            cased=cased, upper=upper, digits=classes["D"],
            punct=classes["P"], foreign=foreign,
        )


@dataclass
class FilterSettings:
    """Every threshold of the filter (each is a CLI option of `pipeline filter`)."""

    alphabet: frozenset | None = None   # None: no foreign-letter rule
    min_sentences: int = 2              # a one-sentence stub gives no next-sentence pair
    min_words: int = 10                 # words in the document
    min_words_per_sentence: float = 3.0
    max_words_per_sentence: float = 100.0
    max_no_word_ratio: float = 0.3      # share of sentences without a word
    max_punct_ratio: float = 0.2        # punctuation / non-space characters
    max_upper_ratio: float = 0.3        # upper-case / cased letters (when >= min_cased_for_upper)
    min_cased_for_upper: int = 20       # cased letters a document needs before the upper-case rule applies
    max_digit_ratio: float = 0.25       # digits / non-space characters
    max_foreign_ratio: float = 0.3      # letters outside the alphabet / letters
    min_lang_prob: float = 0.5          # langdetect probability of the language (0: off)

    def as_options(self) -> dict:
        d = asdict(self)
        d["alphabet"] = "".join(sorted(self.alphabet)) if self.alphabet is not None else None
        return d


def first_failure(st: DocStats, fs: FilterSettings) -> str | None:
    """The reason the first failing rule gives, or None when the document is kept.

    The language rule is applied by the caller (it needs langdetect), after these.
    """
    if st.sentences < fs.min_sentences:
        return "too_few_sentences"
    if st.words < fs.min_words:
        return "too_few_words"
    wps = st.words / max(1, st.sentences)
    if wps < fs.min_words_per_sentence:
        return "short_sentences"
    if wps > fs.max_words_per_sentence:
        return "long_sentences"
    if st.no_word_sentences / max(1, st.sentences) > fs.max_no_word_ratio:
        return "no_word_sentences"
    if st.chars and st.punct / st.chars > fs.max_punct_ratio:
        return "punctuation"
    if st.cased and st.cased >= fs.min_cased_for_upper and st.upper / st.cased > fs.max_upper_ratio:
        return "upper_case"
    if st.chars and st.digits / st.chars > fs.max_digit_ratio:
        return "digits"
    if fs.alphabet is not None and st.letters and st.foreign / st.letters > fs.max_foreign_ratio:
        return "foreign_letters"
    return None


# ---------------------------------------------------------------------------------------------
# The alphabet of a corpus, learned from its letter counts


_SCRIPT_GROUPS = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "KATAKANA-HIRAGANA": "CJK",
                  "IDEOGRAPHIC": "CJK", "BOPOMOFO": "CJK", "HALFWIDTH": "CJK", "FULLWIDTH": "CJK"}


@lru_cache(maxsize=65536)
def script_of(c: str) -> str:
    """The script of a letter, from its Unicode name ("CYRILLIC SMALL LETTER A" -> CYRILLIC)."""
    try:
        first = unicodedata.name(c).split()[0]
    except ValueError:
        return "UNKNOWN"
    return _SCRIPT_GROUPS.get(first, first)


def letter_counts(text: str) -> Counter:
    """Counts of the letters (and marks) in `text`."""
    return Counter({c: n for c, n in char_counts(text).items() if char_class(c) in "UlL"})


def learn_alphabet(counts: Counter, min_script_share: float = 0.15,
                   coverage: float = 0.999) -> frozenset:
    """The corpus's own alphabet: the letters of its main scripts (each >= `min_script_share`
    of all letters) that cover `coverage` of those scripts' letters, with their other case."""
    total = sum(counts.values())
    if not total:
        return frozenset()
    per_script = Counter()
    for c, n in counts.items():
        per_script[script_of(c)] += n
    main = {s for s, n in per_script.items() if n / total >= min_script_share}
    if not main:
        main = {per_script.most_common(1)[0][0]}
    ranked = sorted(((n, c) for c, n in counts.items() if script_of(c) in main), reverse=True)
    budget = coverage * sum(n for n, _ in ranked)
    chars, acc = set(), 0
    for n, c in ranked:
        if acc >= budget:
            break
        chars.add(c)
        acc += n
    for c in list(chars):
        for other in (c.upper(), c.lower()):
            if len(other) == 1:
                chars.add(other)
    return frozenset(chars)


def alphabet_from_text(letters: Iterable[str] | str) -> frozenset:
    """An alphabet given as text ("aábc..."): its letters and their other case."""
    chars = set()
    for c in letters:
        if c.isspace():
            continue
        chars.add(c)
        for other in (c.upper(), c.lower()):
            if len(other) == 1:
                chars.add(other)
    return frozenset(chars)


# ---------------------------------------------------------------------------------------------
# The settings of a language


THRESHOLDS = [f.name for f in fields(FilterSettings) if f.name != "alphabet"]


def default_settings(lang: str) -> FilterSettings:
    """The filter defaults of `lang`: generic ones, updated by its languages/{lang}.json."""
    own = dict(language_settings(lang)["filter"])
    alphabet = own.pop("alphabet", None)
    fs = replace(FilterSettings(), **{k: v for k, v in own.items() if k in THRESHOLDS})
    if alphabet is not None:
        fs = replace(fs, alphabet=alphabet_from_text(alphabet))
    return fs
