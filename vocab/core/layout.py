"""BERT's vocab.txt layout and the words every room of the tokenization layer shares.

The vocab folder holds `vocab.txt` (one token a line, the id is the line number) and
`tokenizer_config.json` with the case setting (`do_lower_case`, `strip_accents`), the same file
Hugging Face's BertTokenizerFast reads. A bare vocab.txt with no config beside it means cased.
The special tokens sit where Google's BERT vocabs have them (`bert_specials()`); code reads
their ids from the vocab (`spec.cls_id`, ...), never hard-codes them.

Usage:
    tokens = read_vocab_txt(Path("data/hu/vocab/vocab.txt"))   # VocabError with a one-line reason
    read_case_setting("data/hu/vocab")                           # (lower_case, strip_accents)
    bert_tokenizer_config(lower_case=False, strip_accents=False, model_max_length=512)
"""
from __future__ import annotations

import json
import os
from pathlib import Path

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
NUM_UNUSED = 99
NUM_SPECIALS = NUM_UNUSED + 5
VOCAB_TXT = "vocab.txt"
TOKENIZER_CONFIG = "tokenizer_config.json"
TOKENIZER_JSON = "tokenizer.json"
SPECIAL_TOKENS_MAP = "special_tokens_map.json"
DEFAULT_MAX_LENGTH = 512     # tokenizer_config.json's model_max_length when no model says more
ROLES = ("pad", "unk", "cls", "sep", "mask")


class VocabError(ValueError):
    """The vocab file or folder is unusable; the message says why and what to do."""


class TrainingError(ValueError):
    """A vocabulary cannot be trained with these settings on this text; the message says what
    to change."""


def bert_specials() -> list[str]:
    """[PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK]: ids 0..103 as in Google's vocabs."""
    return ["[PAD]"] + [f"[unused{i}]" for i in range(NUM_UNUSED)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def is_bert_special(token: str) -> bool:
    """[PAD] [UNK] [CLS] [SEP] [MASK] and the [unusedN] slots: never real word pieces."""
    return token in SPECIAL_TOKENS or (token.startswith("[unused") and token.endswith("]"))


def read_json(path: Path):
    """The JSON in `path`, None when there is no such file; VocabError when it is not JSON."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise VocabError(f"{path} is not valid JSON: fix or remove it") from None


def resolve_vocab_file(path: str | os.PathLike) -> Path:
    path = Path(path)
    vocab_file = path / VOCAB_TXT if path.is_dir() else path
    if not vocab_file.is_file():
        raise VocabError(f"no vocab.txt at {path}: run `pipeline vocab` first or pass --vocab PATH")
    return vocab_file


def read_vocab_txt(vocab_file: Path) -> tuple[str, ...]:
    """The tokens of a BERT vocab.txt, checked: UTF-8, [PAD] first, BERT's specials, no twins."""
    try:
        with open(vocab_file, encoding="utf-8") as fh:
            tokens = tuple(line.rstrip("\n").rstrip("\r") for line in fh)
    except UnicodeDecodeError:
        raise VocabError(f"{vocab_file} is not UTF-8 text: give a WordPiece vocab.txt") from None
    while tokens and tokens[-1] == "":
        tokens = tokens[:-1]
    if not tokens:
        raise VocabError(f"{vocab_file} is empty: give a WordPiece vocab.txt")
    missing = [t for t in SPECIAL_TOKENS if t not in tokens]
    if missing:
        raise VocabError(f"{vocab_file} lacks {', '.join(missing)}: not a BERT vocab; "
                         "rebuild it with `pipeline vocab`")
    if tokens[0] != "[PAD]":
        raise VocabError(f"{vocab_file}: [PAD] must be id 0 (line 1), found {tokens[0]!r}; "
                         "rebuild it with `pipeline vocab`")
    seen: set[str] = set()
    for i, t in enumerate(tokens):
        if t in seen:
            raise VocabError(f"{vocab_file}: token {t!r} appears twice (line {i + 1}); "
                             "a WordPiece vocab needs distinct tokens")
        seen.add(t)
    return tokens


def read_case_setting(folder: str | os.PathLike) -> tuple[bool, bool]:
    """(lower_case, strip_accents) from tokenizer_config.json; cased when there is none."""
    cfg = read_json(Path(folder) / TOKENIZER_CONFIG)
    if cfg is None:
        return False, False
    lower = bool(cfg.get("do_lower_case", False))
    strip = cfg.get("strip_accents")
    if cfg.get("tokenizer_class") == "BertJapaneseTokenizer":
        return lower, False   # its MeCab words keep accents
    # Hugging Face reads strip_accents=None as "follow do_lower_case"; we write it explicitly.
    strip = lower if strip is None else bool(strip)
    return lower, strip


def bert_tokenizer_config(lower_case: bool, strip_accents: bool, model_max_length: int = DEFAULT_MAX_LENGTH) -> dict:
    """The tokenizer_config.json that records the case setting for us and for transformers."""
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": bool(lower_case),
        "strip_accents": bool(strip_accents),
        "tokenize_chinese_chars": True,
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
