"""A byte-level BPE tokenizer as modern encoders use (RoBERTa, ModernBERT), trained with Hugging
Face `tokenizers`: `pipeline vocab --model-type bytelevel-bpe`.

The layout is RoBERTa's: `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, `<mask>` 4 (so its data pads
with 1, never an assumed 0), then the 256 byte pieces and the merges. The ByteLevel
pre-tokenizer adds a prefix space (a word starts with `Ġ` wherever it stands), any text
encodes without an unknown token, and RoBERTa's post-processor gives `<s> A </s>` and
`<s> A </s></s> B </s>` (segment 0 throughout). `<mask>` takes the space before it, as RoBERTa's
does, so "Szeged <mask>" fills the way a fill-mask pipeline expects.

Training reads the same seeded sample of sentences as the WordPiece paths (vocab/sample.py),
raw (the byte-level pre-tokenizer splits them as the tokenizer will at run time), with a
fixed minimum pair frequency of 2; the `tokenizers` trainer gives the same merges for the same
sentences whatever its thread count. Written beside it: tokenizer_config.json and
special_tokens_map.json, so `transformers.AutoTokenizer.from_pretrained(folder)` loads it and
`pipeline encode` takes the folder as a tokenizer (vocab/hf_tokenizer.py).

Usage:
    info = train_bytelevel_bpe("work/sample.txt", "data/hu/vocab", vocab_size=32000)
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from common.atomic import atomic_path, write_json_atomic

from .hf_tokenizer import SPECIAL_TOKENS_MAP, TOKENIZER_JSON
from .spec import TOKENIZER_CONFIG

MODEL_TYPE = "bytelevel-bpe"
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
BYTE_PIECES = 256
MIN_VOCAB_SIZE = len(SPECIALS) + BYTE_PIECES + 1
MIN_FREQUENCY = 2
ROLES = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
         "pad_token": "<pad>", "cls_token": "<s>", "mask_token": "<mask>"}


class ByteLevelError(ValueError):
    """The byte-level BPE cannot be trained with these settings; the message says what to change."""


def make_untrained(lower_case: bool = False, strip_accents: bool = False):
    """The tokenizer before training: BPE on bytes, a prefix space, the case setting."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

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


def train_bytelevel_bpe(sentences: str | os.PathLike, folder: str | os.PathLike, vocab_size: int,
                        lower_case: bool = False, strip_accents: bool = False,
                        model_max_length: int = 512) -> dict:
    """Train on a file of sentences (one a line) and write the tokenizer folder; returns
    {"vocab_size": pieces, "merges": merges}."""
    from tokenizers import AddedToken, pre_tokenizers, processors, trainers

    if vocab_size < MIN_VOCAB_SIZE:
        raise ByteLevelError(f"--vocab-size {vocab_size} is too small for byte-level BPE: its "
                             f"{len(SPECIALS)} special tokens and {BYTE_PIECES} byte pieces take "
                             f"{MIN_VOCAB_SIZE - 1} ids; use at least {MIN_VOCAB_SIZE} (typically 32000-64000)")
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
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / TOKENIZER_JSON) as tmp:
        tok.save(str(tmp))
    write_json_atomic(out / SPECIAL_TOKENS_MAP, dict(ROLES))
    write_json_atomic(out / TOKENIZER_CONFIG, tokenizer_config(lower_case, model_max_length))
    merges = json.loads(tok.to_str())["model"]["merges"]
    return {"vocab_size": tok.get_vocab_size(with_added_tokens=True), "merges": len(merges)}


def tokenizer_config(lower_case: bool, model_max_length: int = 512) -> dict:
    """tokenizer_config.json for transformers: a fast tokenizer from tokenizer.json, RoBERTa's
    special tokens, the prefix space."""
    return {"tokenizer_class": "PreTrainedTokenizerFast", **ROLES, "add_prefix_space": True,
            "do_lower_case": bool(lower_case), "clean_up_tokenization_spaces": False,
            "model_max_length": int(model_max_length)}
