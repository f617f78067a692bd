"""The Hugging Face tokenizer of a vocab: BERT's normaliser, basic pre-tokenizer and WordPiece.

Usage:
    tok = make_tokenizer(load_vocab("data/hu/vocab"))      # tokenizers.Tokenizer, no specials added
    tok.encode("Árvíztűrő tükörfúrógép", add_special_tokens=False).ids
    split = make_pre_tokenizer(lower_case=False)           # text -> BERT's words
    make_fast_tokenizer(spec).save("tokenizer.json")       # what BertTokenizerFast serialises
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


def make_fast_tokenizer(spec: VocabSpec):
    """make_tokenizer's ids with what BertTokenizerFast adds around them: the special tokens as
    added tokens, `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]` with B's segment id 1, the WordPiece
    decoder. Saved as tokenizer.json beside vocab.txt, AutoTokenizer gives the same ids."""
    from tokenizers import AddedToken, decoders, processors

    tok = make_tokenizer(spec)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")])
    cls, sep = ("[CLS]", spec.cls_id), ("[SEP]", spec.sep_id)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", special_tokens=[cls, sep])
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok
