"""How many tokens a text will be, before there is a vocabulary: its words (runs between
spaces) times the pieces a word takes, and one token a character in the scripts written
without spaces (CJK, Thai, Lao, Khmer, Myanmar, Tibetan: pipeline/text/doc_rules.py's ranges),
as BERT's basic tokenizer splits CJK.

TOKENS_PER_WORD is what encode's WordPiece vocabularies (32k) took for a word and the
punctuation on it on the real dumps: 1.54 for Ukrainian, 1.13 for Vietnamese (short syllable
words), 1.28 for the Hungarian sample (bench/README.md, "bench_web_tokens.py"); 1.3 is the middle,
so the estimate is within about 16% of encode's count for those. Counting words the regex way
(words and punctuation apart, as BERT splits them) would be closer (1.0-1.2 a token) but four
times slower than str.split (15-25 against 70-110 MB/s), and the estimate runs on every web
document ingest writes. It sizes slices (--max-tokens) and counts passes before encode; encode's
manifest has the true count.

Usage:
    estimate_tokens("Az Árvíztűrő tükörfúrógép.")     # 3 words x TOKENS_PER_WORD, rounded
"""
from __future__ import annotations

import re

from pipeline.text.doc_rules import UNSPACED_RANGES

TOKENS_PER_WORD = 1.3
_UNSPACED = re.compile(f"[{UNSPACED_RANGES}]")


def estimate_tokens(text: str) -> int:
    """The estimated tokens of `text` (see the module doc)."""
    unspaced = len(_UNSPACED.findall(text))
    words = len((_UNSPACED.sub(" ", text) if unspaced else text).split())
    return round(words * TOKENS_PER_WORD) + unspaced
