"""The kind `unigram`: a SentencePiece / Unigram tokenizer.json (XLM-R's, T5's, ALBERT's, or one
converted by transformers from a sentencepiece model).

Its vocabulary is a list of [piece, score] (the id is the place in it) and its unknown token
the model's `unk_id`; a piece that starts a word begins with the Metaspace mark `▁`. Everything
else is any fast tokenizer's (vocab/kinds/fast.py): XLM-R pads with 1, its pair is
`<s> A </s></s> B </s>` with one segment id. Not trained here: `pipeline vocab --model-type
unigram` trains a WordPiece vocab.txt from sentencepiece's unigram pieces (the `wordpiece`
kind); a Unigram tokenizer.json comes with a model (`encode --tokenizer`, `--init_from`).

Usage:
    spec = load_tokenizer("xlm-roberta-base/")     # UnigramTokenizer; spec.pad_id == 1
"""
from __future__ import annotations

from dataclasses import dataclass

from vocab.kinds.base import Found
from vocab.kinds.fast import TokenizerSpec


@dataclass(frozen=True)
class UnigramTokenizer(TokenizerSpec):
    """A Unigram tokenizer.json (see the module doc)."""

    kind = "unigram"
    description = "a SentencePiece/Unigram tokenizer.json (XLM-R's): `encode --tokenizer`, `--init_from`"

    @classmethod
    def claims(cls, found: Found) -> bool:
        return super().claims(found) and found.model_type == "Unigram"

    @classmethod
    def model_vocab(cls, model: dict) -> dict[str, int]:
        return {piece[0]: i for i, piece in enumerate(model.get("vocab") or [])}

    @classmethod
    def model_unk(cls, model: dict, tokens: list[str], vocab: dict) -> str | None:
        i = model.get("unk_id")
        return tokens[i] if isinstance(i, int) and 0 <= i < len(tokens) else None
