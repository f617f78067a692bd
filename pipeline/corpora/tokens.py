"""How many tokens a text will be, before there is a vocabulary: its words (runs between
spaces) times the pieces a word takes, and one token a character in the scripts written
without spaces (CJK, Thai, Lao, Khmer, Myanmar, Tibetan: pipeline/text/doc_rules.py's ranges),
as BERT's basic tokenizer splits CJK.

TOKENS_PER_WORD is what encode's WordPiece vocabularies take for a word and its punctuation,
measured on real dumps (bench/README.md, "bench_web_tokens.py"). It is an estimate for sizing a
slice (--max-tokens) and counting passes before encode; encode's manifest has the true count.
Counting is C-speed string work (about 70 MB/s), so a slice is sized without reading it twice
at the pace of the cleaning.

Usage:
    estimate_tokens("Az Árvíztűrő tükörfúrógép.")     # 3 words x TOKENS_PER_WORD, rounded
"""
from __future__ import annotations

import re

from pipeline.text.doc_rules import UNSPACED_RANGES

TOKENS_PER_WORD = 1.5
_UNSPACED = re.compile(f"[{UNSPACED_RANGES}]")


def estimate_tokens(text: str) -> int:
    """The estimated tokens of `text` (see the module doc)."""
    unspaced = len(_UNSPACED.findall(text))
    words = len((_UNSPACED.sub(" ", text) if unspaced else text).split())
    return round(words * TOKENS_PER_WORD) + unspaced
