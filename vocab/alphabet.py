"""The alphabet of a corpus: every character BERT's tokenizer can see in it.

The characters are taken after the case setting (BERT's normaliser: clean-up, optional
lower-casing and accent stripping, spaces around CJK characters), so they are exactly the
characters WordPiece will have to match. Whitespace and control characters never reach
WordPiece and are left out. Every character of the alphabet goes into vocab.txt both as `c`
and as `##c`, so no word can become `[UNK]` because of one rare letter.

Usage:
    norm = make_normalizer(lower_case=False, strip_accents=False)
    chars = alphabet_of(["Árvíztűrő tükörfúrógép"], norm)
"""
from __future__ import annotations

import unicodedata
from typing import Iterable


def make_normalizer(lower_case: bool = False, strip_accents: bool = False):
    """BERT's normaliser for a case setting (the one make_tokenizer and make_pre_tokenizer use)."""
    from tokenizers import normalizers

    return normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                      strip_accents=bool(strip_accents),
                                      lowercase=bool(lower_case))


def is_vocab_char(char: str) -> bool:
    """True for a character that can be part of a word (not whitespace, not a control/format char)."""
    return not char.isspace() and not unicodedata.category(char).startswith("C")


def alphabet_of(lines: Iterable[str], normalizer) -> set[str]:
    """The set of word characters in `lines` after `normalizer` (streaming).

    BERT's normaliser works character by character (clean-up, CJK spacing, NFD + dropping of
    combining marks, per-character lower-casing), so normalising each distinct raw character
    gives the alphabet of the normalised text, at a tenth of the cost of normalising it all.
    """
    raw: set[str] = set()
    for line in lines:
        raw.update(line)
    return {c for r in raw for c in normalizer.normalize_str(r) if is_vocab_char(c)}
