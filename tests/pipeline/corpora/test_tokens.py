"""The token estimate: words where words are spaced, a token a character where they are not,
counted the same in every script."""
from __future__ import annotations

from pipeline.corpora.tokens import TOKENS_PER_WORD, estimate_tokens


def test_spaced_scripts_count_words_times_the_pieces_a_word_takes():
    for text in ("Az árvíztűrő tükörfúrógép működik.", "Ця машина працює добре.", "Máy này chạy tốt lắm."):
        assert estimate_tokens(text) == round(len(text.split()) * TOKENS_PER_WORD)


def test_unspaced_scripts_count_characters():
    assert estimate_tokens("東京は日本の首都") == 8
    assert estimate_tokens("ภาษาไทย") == 7
    assert estimate_tokens("東京 Tokyo") == 2 + round(TOKENS_PER_WORD)
    assert estimate_tokens("") == 0
