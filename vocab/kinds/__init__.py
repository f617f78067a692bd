"""The registry of tokenizer kinds: the one place where a tokenizer's kind is decided. Everything
else asks the loaded tokenizer (vocab/kinds/base.py: TokenizerKind).

    spec = load_tokenizer("data/hu/vocab")      # the first kind that claims the folder; VocabError
    spec = load_vocab("data/hu/vocab/vocab.txt")  # a BERT vocab.txt only (wordpiece or mecab)
    kind = training_kind("bpe", segmenter="mecab")   # what `pipeline vocab` trains: MecabVocab
    MODEL_TYPES                                 # ("bpe", "unigram", "bytelevel-bpe"): --model-type

A new kind is one module of vocab/kinds/ holding a TokenizerKind subclass and one line here, at
the place where it should be asked: kinds are asked in this order, a vocab.txt on MeCab words
before any vocab.txt, a byte-level or Unigram tokenizer.json before any tokenizer.json.
"""
from __future__ import annotations

from pathlib import Path

from vocab.core.layout import TrainingError, VocabError, resolve_vocab_file
from vocab.kinds.base import Found, TokenizerKind
from vocab.kinds.bytelevel import ByteLevelBPE
from vocab.kinds.fast import TokenizerSpec
from vocab.kinds.mecab import MecabVocab
from vocab.kinds.unigram import UnigramTokenizer
from vocab.kinds.wordpiece import VocabSpec

# name -> the kind, in the order they are asked
KINDS: dict[str, type[TokenizerKind]] = {
    "mecab": MecabVocab,
    "wordpiece": VocabSpec,
    "bytelevel-bpe": ByteLevelBPE,
    "unigram": UnigramTokenizer,
    "fast": TokenizerSpec,
}


def model_types() -> tuple[str, ...]:
    """What `pipeline vocab --model-type` takes: every kind's, in registry order."""
    return tuple(dict.fromkeys(t for kind in KINDS.values() for t in kind.model_types))


MODEL_TYPES = model_types()


def _load(found: Found, kinds) -> TokenizerKind:
    error = None
    for kind in kinds:
        if kind.claims(found):
            try:
                return kind.load(found)
            except VocabError as exc:   # another kind may still read the folder (a vocab.txt not BERT's)
                error = error or exc
    raise error or VocabError(
        f"{found.path} holds no tokenizer (no tokenizer.json, no vocab.txt, no sentencepiece "
        "model): give a transformers tokenizer folder (AutoTokenizer.save_pretrained writes "
        "tokenizer.json) or a WordPiece vocab.txt")


def load_tokenizer(path) -> TokenizerKind:
    """The tokenizer at `path` (a folder, a vocab.txt or a tokenizer.json), of the first kind
    that claims it; VocabError (one line: what is wrong, what to do) when none can read it."""
    found = Found(Path(path))
    if not found.path.exists():
        raise VocabError(f"{found.path} does not exist: give a WordPiece vocab.txt or its folder "
                         "(`pipeline vocab` makes one), or a transformers tokenizer folder (with tokenizer.json)")
    return _load(found, KINDS.values())


def load_vocab(path) -> VocabSpec:
    """A BERT vocab.txt (or the folder holding it): a kind whose tokenizer is a vocab.txt."""
    return _load(Found(resolve_vocab_file(path)), [k for k in KINDS.values() if issubclass(k, VocabSpec)])


def training_kind(model_type: str, segmenter: str | None = None) -> type[TokenizerKind]:
    """The kind `pipeline vocab --model-type model_type` makes for a language whose words
    `segmenter` finds; TrainingError naming the model types when none does."""
    for kind in KINDS.values():
        if kind.trains(model_type, segmenter):
            return kind
    raise TrainingError(f"--model-type {model_type!r} is not one of {', '.join(model_types())}")


def describe() -> str:
    """Each kind and what it is (the docs' table)."""
    return "\n".join(f"{name}: {kind.description}" for name, kind in KINDS.items())
