"""The Hugging Face tokenizer of a vocab: BERT's normaliser, basic pre-tokenizer and WordPiece.

Usage:
    tok = make_tokenizer(load_vocab("data/hu/vocab"))      # tokenizers.Tokenizer, no specials added
    tok.encode("Árvíztűrő tükörfúrógép", add_special_tokens=False).ids
    split = make_pre_tokenizer(lower_case=False)           # text -> BERT's words
"""
from __future__ import annotations

from .normalizer import make_normalizer
from .spec import VocabSpec


def make_tokenizer(spec: VocabSpec, max_input_chars_per_word: int = 100):
    """A `tokenizers.Tokenizer`: BERT normaliser + basic pre-tokenizer + WordPiece (no specials added)."""
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import WordPiece

    vocab = {t: i for i, t in enumerate(spec.tokens)}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]",
                              max_input_chars_per_word=max_input_chars_per_word))
    tok.normalizer = make_normalizer(spec.lower_case, spec.strip_accents)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def make_pre_tokenizer(lower_case: bool = False, strip_accents: bool = False):
    """BERT's normaliser + basic split alone, as a function text -> list of words."""
    from tokenizers import pre_tokenizers

    norm = make_normalizer(lower_case, strip_accents)
    pre = pre_tokenizers.BertPreTokenizer()

    def split(text: str) -> list[str]:
        return [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(text))]

    return split
