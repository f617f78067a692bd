"""BERT's normaliser and character classes: one implementation for every part of the
tokenization layer (vocab sample, alphabet, fast WordPiece, the Hugging Face tokenizer).

BERT's normaliser (clean-up, spaces around CJK characters, optional lower-casing and accent
stripping) works one character at a time, so `CharNormalizer` normalises each distinct
character once and remembers it: normalising a long text, or finding its alphabet, then costs
a set of its characters and a substitution, several times less than normalising it all.

Usage:
    norm = CharNormalizer(lower_case=False, strip_accents=False)
    norm.char("Á")                       # "Á" (cased); "a" with lower_case and strip_accents
    norm.text("Árvíztűrő tükörfúrógép")  # the normalised text
    alphabet_of(lines, norm)             # every character WordPiece will see in `lines`
    split_kind("-")                      # "punct": how BERT's pre-tokenizer treats a character
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache


def make_normalizer(lower_case: bool = False, strip_accents: bool = False):
    """Hugging Face's BertNormalizer for a case setting (the one every tokenizer here uses).
    Unlike Google's reference, lower-casing never implies stripping accents."""
    from tokenizers import normalizers

    return normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                      strip_accents=bool(strip_accents),
                                      lowercase=bool(lower_case))


class CharNormalizer:
    """BERT's normaliser, one distinct character at a time (see the module docstring)."""

    def __init__(self, lower_case: bool = False, strip_accents: bool = False):
        self.lower_case, self.strip_accents = bool(lower_case), bool(strip_accents)
        self._norm = make_normalizer(lower_case, strip_accents)
        self._chars: dict[str, str] = {}

    def char(self, c: str) -> str:
        """The normalised form of one character (possibly empty, or several characters)."""
        n = self._chars.get(c)
        if n is None:
            n = self._chars[c] = self._norm.normalize_str(c)
        return n

    def text(self, text: str) -> str:
        """`text` normalised: only the characters the normaliser changes are substituted."""
        table = {}
        for c in set(text):
            n = self.char(c)
            if n != c:
                table[c] = n
        if not table:
            return text
        changed = re.compile("[" + re.escape("".join(sorted(table))) + "]")
        return changed.sub(lambda m: table[m.group()], text)


def is_vocab_char(char: str) -> bool:
    """True for a character that can be part of a word (not whitespace, not a control/format char)."""
    return not char.isspace() and not unicodedata.category(char).startswith("C")


def alphabet_of(lines: Iterable[str], normalizer: CharNormalizer) -> set[str]:
    """The word characters of `lines` after the normaliser (streaming): whitespace and control
    characters never reach WordPiece and are left out."""
    raw: set[str] = set()
    for line in lines:
        raw.update(line)
    return {c for r in raw for c in normalizer.char(r) if is_vocab_char(c)}


@cache
def split_kind(char: str) -> str:
    """How BERT's basic pre-tokenizer treats one (normalised) character between two letters:
    'space' (a split), 'punct' (a word of its own), 'join' (part of a word) or 'complex'.
    Asked of Hugging Face's BertPreTokenizer itself, so its Unicode tables decide, not Python's."""
    from tokenizers import pre_tokenizers

    words = [w for w, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(f"a{char}a")]
    if words == ["a", "a"]:
        return "space"
    if words == ["a", char, "a"]:
        return "punct"
    if words == [f"a{char}a"]:
        return "join"
    return "complex"
