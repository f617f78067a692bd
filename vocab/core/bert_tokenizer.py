"""The Hugging Face tokenizer of a vocab: BERT's normaliser, basic pre-tokenizer and WordPiece.

`spec` is a WordPiece vocab (vocab/kinds/wordpiece.py): its tokens, case setting, cls and sep ids.

Usage:
    tok = make_tokenizer(load_tokenizer("data/hu/vocab"))      # tokenizers.Tokenizer, no specials added
    tok.encode("Árvíztűrő tükörfúrógép", add_special_tokens=False).ids
    split = make_pre_tokenizer(lower_case=False)           # text -> BERT's words
    make_fast_tokenizer(spec).save("tokenizer.json")       # what BertTokenizerFast serialises
"""
from __future__ import annotations

from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers, processors
from tokenizers.models import WordPiece

from vocab.core.layout import SPECIAL_TOKENS
from vocab.core.normalizer import make_normalizer


def make_tokenizer(spec, max_input_chars_per_word: int = 100):
    """A `tokenizers.Tokenizer`: BERT normaliser + basic pre-tokenizer + WordPiece (no specials added)."""
    vocab = {t: i for i, t in enumerate(spec.tokens)}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]",
                              max_input_chars_per_word=max_input_chars_per_word))
    tok.normalizer = make_normalizer(spec.lower_case, spec.strip_accents)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def make_pre_tokenizer(lower_case: bool = False, strip_accents: bool = False):
    """BERT's normaliser + basic split alone, as a function text -> list of words."""
    norm = make_normalizer(lower_case, strip_accents)
    pre = pre_tokenizers.BertPreTokenizer()

    def split(text: str) -> list[str]:
        return [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(text))]

    return split


def make_fast_tokenizer(spec, normalizer=None, pre_tokenizer=None):
    """make_tokenizer's ids with what BertTokenizerFast adds around them: the special tokens as
    added tokens, `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]` with B's segment id 1, the WordPiece
    decoder. Saved as tokenizer.json beside vocab.txt, AutoTokenizer gives the same ids.
    `normalizer`, `pre_tokenizer`: other than BERT's (WordPiece on MeCab words: vocab/kinds/mecab.py)."""
    tok = make_tokenizer(spec)
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    cls, sep = ("[CLS]", spec.cls_id), ("[SEP]", spec.sep_id)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", special_tokens=[cls, sep])
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok
