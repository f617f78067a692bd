"""A byte-level BPE tokenizer as modern encoders use (RoBERTa, ModernBERT), trained with Hugging
Face `tokenizers`: `pipeline vocab --model-type bytelevel-bpe`.

The layout is RoBERTa's: `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, `<mask>` 4 (so its data pads
with 1, never an assumed 0), then the 256 byte pieces and the merges. The ByteLevel
pre-tokenizer adds a prefix space (a word starts with `Ġ` wherever it stands), any text
encodes without an unknown token, and RoBERTa's post-processor gives `<s> A </s>` and
`<s> A </s></s> B </s>` (segment 0 throughout). `<mask>` takes the space before it, as RoBERTa's
does, so "Szeged <mask>" fills the way a fill-mask pipeline expects.

Training reads the same seeded sample of sentences as the WordPiece paths
(vocab/training/sample.py), raw (the byte-level pre-tokenizer splits them as the tokenizer will
at run time), with a fixed minimum pair frequency of 2; the `tokenizers` trainer gives the same
merges for the same sentences whatever its thread count. The kind (vocab/kinds/bytelevel.py)
writes the folder: tokenizer.json, tokenizer_config.json and special_tokens_map.json, so
`transformers.AutoTokenizer.from_pretrained(folder)` loads it and `pipeline encode` takes it.

Usage:
    tok = train_bytelevel_bpe("work/sample.txt", vocab_size=32000)   # a tokenizers.Tokenizer
"""
from __future__ import annotations

import os

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from vocab.core.layout import TrainingError

MODEL_TYPE = "bytelevel-bpe"
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
BYTE_PIECES = 256
MIN_VOCAB_SIZE = len(SPECIALS) + BYTE_PIECES + 1
MIN_FREQUENCY = 2
ROLES = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
         "pad_token": "<pad>", "cls_token": "<s>", "mask_token": "<mask>"}


class ByteLevelError(TrainingError):
    """The byte-level BPE cannot be trained with these settings; the message says what to change."""


def make_untrained(lower_case: bool = False, strip_accents: bool = False):
    """The tokenizer before training: BPE on bytes, a prefix space, the case setting."""
    tok = Tokenizer(models.BPE())
    steps = []
    if strip_accents:
        steps += [normalizers.NFD(), normalizers.StripAccents(), normalizers.NFC()]
    if lower_case:
        steps.append(normalizers.Lowercase())
    if steps:
        tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    return tok


def check_size(vocab_size: int) -> None:
    if vocab_size < MIN_VOCAB_SIZE:
        raise ByteLevelError(f"--vocab-size {vocab_size} is too small for byte-level BPE: its "
                             f"{len(SPECIALS)} special tokens and {BYTE_PIECES} byte pieces take "
                             f"{MIN_VOCAB_SIZE - 1} ids; use at least {MIN_VOCAB_SIZE} (typically 32000-64000)")


def train_bytelevel_bpe(sentences: str | os.PathLike, vocab_size: int, lower_case: bool = False,
                        strip_accents: bool = False) -> Tokenizer:
    """The tokenizer trained on a file of sentences (one a line), with RoBERTa's post-processor."""
    check_size(vocab_size)
    tok = make_untrained(lower_case, strip_accents)
    specials = [AddedToken(t, special=True, lstrip=t == "<mask>", normalized=False) for t in SPECIALS]
    trainer = trainers.BpeTrainer(vocab_size=int(vocab_size), min_frequency=MIN_FREQUENCY,
                                  special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train([str(sentences)], trainer)
    ids = {t: tok.token_to_id(t) for t in SPECIALS}
    assert list(ids.values()) == list(range(len(SPECIALS))), ids
    tok.post_processor = processors.RobertaProcessing(("</s>", ids["</s>"]), ("<s>", ids["<s>"]),
                                                      trim_offsets=True, add_prefix_space=True)
    return tok


def tokenizer_config(lower_case: bool, model_max_length: int = 512) -> dict:
    """tokenizer_config.json for transformers: a fast tokenizer from tokenizer.json, RoBERTa's
    special tokens, the prefix space."""
    return {"tokenizer_class": "PreTrainedTokenizerFast", **ROLES, "add_prefix_space": True,
            "do_lower_case": bool(lower_case), "clean_up_tokenization_spaces": False,
            "model_max_length": int(model_max_length)}
