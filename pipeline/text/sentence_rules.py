"""A rule-based sentence splitter for every script Wikipedia uses.

Terminators fall into three kinds:
- ambiguous (`.` `…`): a sentence ends only before whitespace and a sentence start, and not
  after an abbreviation of the language, a single capital initial ("J. R. R. Tolkien"), a
  word with inner dots ("e.g.", "т.зв."), or, in languages that write ordinals with a dot, after a
  short number or a Roman numeral ("5. május", "XIV. Lajos"). Decimals and URLs have no space
  after their dots, so they are never split.
- spaced (`!` `?` and the unambiguous stops of scripts that put a space after them: Arabic
  "؟" "۔", Indic danda "।" "॥", Armenian "։", Mongolian "᠃", Tibetan "༎", Ol Chiki "᱾",
  Meetei Mayek "꯫", Vai "꘎", Bamum "꛳", Chakma danda): end a sentence
  before whitespace (for `!`/`?` also only before a sentence start: "Yahoo! is", «Йди!» — сказав).
- unspaced (CJK "。" "！" "？", Ethiopic "።", Myanmar "။", Khmer "។" "៕"): end a sentence
  wherever they stand, since these scripts do not put spaces between sentences.
Closing quotes and brackets right after a terminator stay with its sentence. Thai and Lao
have no sentence punctuation; their paragraphs are kept whole.

No sentence ends inside brackets or quotes of any script ("パンソリ（唱劇ともいう。一種の歌劇）が…"
is one sentence) when they close within MAX_BRACKET_SPAN characters; a bracket that never
closes, or closes much later, protects nothing, so a stray "(" cannot glue a paragraph into
one line. Abbreviations: the language file's (languages/*.json) plus those learned from the
corpus itself (pipeline/text/abbreviations.py).

Usage:
    splitter = SentenceSplitter.for_language("uk")
    splitter.split("Він народився 1990 р. у Києві. Потім переїхав.")
    # ['Він народився 1990 р. у Києві.', 'Потім переїхав.']
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .language_settings import language_settings

AMBIGUOUS = ".…"
# Greek ";" not yet NFC; Ol Chiki, Meetei Mayek, Vai, Bamum, Chakma
SPACED = "!?‼⁇⁈⁉\u037e؟۔।॥։᠃༎፧፨᱾᱿꯫꘎꘏꛳꛷\U00011141\U00011142"
UNSPACED = "。！？｡።။។៕"
CLOSERS = "\"'»”’“‘›)]}」』】〕〉》）］｝〗〙〛"
OPENERS = "\"'«“‘„‹([{¿¡「『【〔〈《（［｛〖〘〚"


def _terminator_re(extra: str) -> re.Pattern:
    terms = re.escape(AMBIGUOUS + SPACED + UNSPACED + extra)
    return re.compile(f"[{terms}]+[{re.escape(CLOSERS)}]*")


_ROMAN_RE = re.compile(r"^[IVXLCDM]+$")
QUOTATIVE = "とっ"  # Japanese particles that follow a quotation inside its sentence
MAX_BRACKET_SPAN = 1200  # characters from an opening bracket to its closer: a long quotation
# Bracket pairs (opener -> closers). “ opens in English and closes „…“ in German and Slavic text.
BRACKETS = {"(": ")", "[": "]", "{": "}", "（": "）", "［": "］", "｛": "｝", "「": "」", "『": "』",
            "【": "】", "〔": "〕", "〈": "〉", "《": "》", "〖": "〗", "〘": "〙", "«": "»", "‹": "›",
            "„": "“”", "“": "”", "\"": "\""}
_BRACKET_CHAR = re.compile("[" + re.escape("".join(BRACKETS) + "".join(BRACKETS.values())) + "]")


def protected_spans(text: str) -> list[tuple[int, int]]:
    """(opener, closer) positions of the brackets and quotes of `text` that close within
    MAX_BRACKET_SPAN characters; unclosed ones are ignored."""
    stack: list[tuple[str, int]] = []
    spans = []
    for m in _BRACKET_CHAR.finditer(text):
        c, pos = m.group(), m.start()
        for depth in range(len(stack) - 1, -1, -1):  # the innermost opener this closes
            if c in BRACKETS[stack[depth][0]]:
                start = stack[depth][1]
                del stack[depth:]  # openers inside it that never closed are dropped
                if pos - start <= MAX_BRACKET_SPAN:
                    spans.append((start, pos))
                break
        else:
            if c in BRACKETS:
                stack.append((c, pos))
    return spans


def _inside(spans: list[tuple[int, int]], begin: int, end: int) -> bool:
    """Is the terminator run text[begin:end] inside a span, its closer not part of the run?"""
    return any(start < begin and end <= close for start, close in spans)


class SentenceSplitter:
    """Splits one paragraph (a line without newlines) into sentences."""

    def __init__(self, abbreviations=(), ordinal_dot: bool = False, extra_terminators: str = "",
                 single_letter_words: str = "I", sentence_final=(), learned=()):
        self.abbreviations = frozenset(a.rstrip(".").lower() for a in (*abbreviations, *learned))
        # Capital letters that are words, not initials: Roman "I" ("World War I."), Vietnamese "Á".
        self.single_letter_words = frozenset(single_letter_words)
        self.sentence_final = frozenset(a.rstrip(".").lower() for a in sentence_final)
        self.ordinal_dot = ordinal_dot
        self.extra_terminators = extra_terminators  # e.g. Greek ";" (the question mark after NFC)
        self._spaced = set(SPACED + extra_terminators)
        self._unspaced = set(UNSPACED)
        self._re = _terminator_re(extra_terminators)

    @classmethod
    def for_language(cls, lang: str, learned=()) -> SentenceSplitter:
        """The splitter of `lang`: its language file's settings, plus `learned` abbreviations."""
        s = language_settings(lang)["splitter"]
        final = s.get("sentence_final", ())
        return cls(s.get("abbreviations", ()), s.get("ordinal_dot", False),
                   s.get("extra_terminators", ""), s.get("single_letter_words", "I"), final,
                   [a for a in learned if a not in final])

    def split(self, paragraph: str) -> list[str]:
        """The sentences of `paragraph`, stripped, none empty."""
        out = []
        start = 0
        spans = None
        for m in self._re.finditer(paragraph):
            end = m.end()
            if self._ends_sentence(paragraph, m.start(), end, m.group()):
                if spans is None:
                    spans = protected_spans(paragraph) if _BRACKET_CHAR.search(paragraph) else []
                if spans and _inside(spans, m.start(), end):
                    continue
                piece = paragraph[start:end].strip()
                if piece:
                    out.append(piece)
                start = end
        piece = paragraph[start:].strip()
        if piece:
            out.append(piece)
        return out

    # -- the decision at one terminator ------------------------------------------------------

    def _ends_sentence(self, text: str, begin: int, end: int, run: str) -> bool:
        marks = run.rstrip(CLOSERS)
        if any(c in self._unspaced for c in marks):
            # 「…。」と言った: a quotation particle after the closing quote continues the sentence
            return not (len(run) > len(marks) and end < len(text) and text[end] in QUOTATIVE)
        # Every other terminator needs whitespace after it.
        nxt = end
        n = len(text)
        if nxt >= n or not text[nxt].isspace():
            return False
        while nxt < n and text[nxt].isspace():
            nxt += 1
        if nxt >= n:
            return True  # trailing whitespace: the paragraph ends here anyway
        if any(c in self._spaced and c not in "!?‼⁇⁈⁉" for c in marks):
            return True  # unambiguous stops of scripts that space them
        if not _starts_sentence(text, nxt):
            return False
        if any(c in "!?‼⁇⁈⁉" or c in self._spaced for c in marks):
            return True
        # Only "." and "…" here.
        if marks != "." or len(run) != len(marks):
            return True  # "...", "…" or a dot after a closing bracket/quote before a capital
        return not self._is_abbreviation(text, begin)

    def _is_abbreviation(self, text: str, dot: int) -> bool:
        """True when the dot at `dot` belongs to the word before it, not to the sentence."""
        if dot == 0:
            return False
        if not (text[dot - 1].isalnum()):
            return False
        ws = dot - 1
        while ws >= 0 and not text[ws].isspace():
            ws -= 1
        token = text[ws + 1:dot].lstrip(OPENERS)
        if not token:
            return False
        if token.lower() in self.sentence_final:
            return False  # "v.v." (Vietnamese "etc.") before a capital ends its sentence
        if "." in token and _is_dotted_abbreviation(token):
            return True  # "e.g.", "U.S.", "т.зв." (not "example.com" or "2.000.000")
        if len(token) == 1 and token.isupper() and token not in self.single_letter_words:
            return True  # an initial: "J. R. R. Tolkien" (lower-case ones via the lists: "м. Київ")
        if token.lower() in self.abbreviations:
            return True
        if "-" in token and token.split("-")[-1].lower() in self.abbreviations:
            return True
        if self.ordinal_dot:
            if token.isdigit() and len(token) <= 3:
                return True  # "5. május", "am 3. Oktober"
            if _ROMAN_RE.match(token):
                return True  # "XIV. Lajos"
        return False


def _is_dotted_abbreviation(token: str) -> bool:
    parts = token.split(".")
    return (any(c.isalpha() for c in token) and all(len(p) <= 4 for p in parts)
            and not any(c in token for c in "/:@"))


def _starts_sentence(text: str, i: int) -> bool:
    """Can a sentence start at text[i]? Not at a lower-case letter, a dash, a comma or the like."""
    n = len(text)
    while i < n and text[i] in OPENERS:
        i += 1
    if i >= n:
        return True
    c = text[i]
    cat = _category(c)
    if cat == "Ll":
        return False
    if cat in ("Pd", "Po", "Pe", "Pf") and c not in "¿¡":
        return False
    return True


@lru_cache(maxsize=8192)
def _category(c: str) -> str:
    return unicodedata.category(c)
