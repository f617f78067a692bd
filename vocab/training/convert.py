"""sentencepiece model -> WordPiece vocab.txt, with BERT's special tokens and a full alphabet.

Layout (the ids Google's BERT vocabs use): `[PAD]` 0, `[unused0]`..`[unused98]` 1-99, `[UNK]`
100, `[CLS]` 101, `[SEP]` 102, `[MASK]` 103, then the pieces in sentencepiece's order (best
first): a word-initial piece `▁x` becomes `x`, a continuation piece `x` becomes `##x`. Dropped:
sentencepiece's own specials and byte pieces, `▁` alone, and pieces WordPiece can never match
(they span a BERT split - punctuation, CJK, whitespace - or change under the case setting;
these only come from models trained elsewhere, via --from-spm). Then every character of the
alphabet that is still missing is added as `c` and `##c`.

Size: exactly `vocab_size` when there are enough pieces. The alphabet entries always stay; if
the total goes over, the lowest-ranked learned pieces are dropped (for BPE that is the same as
training with fewer merges). A vocab_size too small for the specials plus the alphabet is an
error.

Usage:
    pieces = read_spm_pieces("spm.model")
    tokens, info = to_wordpiece(pieces, alphabet, vocab_size=32000)
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import sentencepiece as spm

from vocab.core.bert_tokenizer import make_pre_tokenizer
from vocab.core.layout import NUM_SPECIALS, TrainingError, bert_specials

SPM_SPACE = "\u2581"  # sentencepiece's word-start mark


class ConversionError(TrainingError):
    """The conversion cannot give a usable vocab; the message says what to change."""


def read_spm_pieces(model_file: str | os.PathLike) -> list[str]:
    """The normal pieces of a sentencepiece model in id order (specials, unknown, byte and
    unused pieces left out)."""
    try:
        sp = spm.SentencePieceProcessor(model_file=str(model_file))
    except (OSError, RuntimeError) as exc:
        raise ConversionError(f"{model_file} is not a sentencepiece model ({exc}): "
                              "give the .model file sentencepiece wrote") from None
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())
            if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i) or sp.is_unused(i))]


@dataclass
class ConversionInfo:
    pieces: int = 0          # normal pieces in the model
    kept: int = 0            # learned pieces in vocab.txt
    unmatchable: int = 0     # dropped: span a BERT split or change under the case setting
    duplicates: int = 0      # dropped: same token twice
    trimmed: int = 0         # dropped: lowest-ranked, to make room for the alphabet
    alphabet: int = 0        # characters of the alphabet
    alphabet_added: int = 0  # `c` / `##c` entries the model lacked

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def piece_to_token(piece: str) -> str | None:
    """`▁x` -> `x`, `x` -> `##x`; None for `▁` alone."""
    if piece.startswith(SPM_SPACE):
        return piece[1:] or None
    return "##" + piece


def least_size(alphabet: set[str]) -> int:
    """The fewest vocab.txt lines the conversion keeps: the specials and each character of the
    input as c and ##c."""
    return NUM_SPECIALS + 2 * len(alphabet)


def to_wordpiece(pieces: list[str], alphabet: set[str], vocab_size: int,
                 lower_case: bool = False, strip_accents: bool = False,
                 split: Callable[[str], list[str]] | None = None) -> tuple[list[str], ConversionInfo]:
    """The vocab.txt tokens (see module doc) and what the conversion kept and dropped. `split`:
    the words WordPiece will see (default BERT's split with the case setting; on MeCab words,
    vocab/kinds/mecab.py, only whitespace splits, so a piece may hold CJK characters and
    punctuation)."""
    split = split or make_pre_tokenizer(lower_case, strip_accents)
    info = ConversionInfo(pieces=len(pieces), alphabet=len(alphabet))
    specials = bert_specials()
    seen = set(specials)
    learned: list[str] = []
    for piece in pieces:
        token = piece_to_token(piece)
        if token is None:
            continue
        body = token[2:] if token.startswith("##") else token
        # A piece WordPiece can match is one whole BERT word, unchanged by the normaliser.
        if not body or SPM_SPACE in body or split(body) != [body]:
            info.unmatchable += 1
            continue
        if token in seen:
            info.duplicates += 1
            continue
        seen.add(token)
        learned.append(token)

    alphabet_tokens = {t for c in alphabet for t in (c, "##" + c)}
    missing = sorted(t for t in alphabet_tokens if t not in seen)
    info.alphabet_added = len(missing)
    budget = vocab_size - NUM_SPECIALS - len(missing)
    if budget < sum(1 for t in learned if t in alphabet_tokens):
        need = least_size(alphabet)
        raise ConversionError(
            f"--vocab-size {vocab_size} is too small: the {NUM_SPECIALS} special tokens and "
            f"the {len(alphabet)} characters of the input (each as c and ##c) need {need} "
            f"entries; raise --vocab-size to at least {need}")
    # Drop the lowest-ranked learned pieces that are not alphabet entries until it fits.
    excess = max(0, len(learned) - budget)
    if excess:
        keep = [True] * len(learned)
        for i in range(len(learned) - 1, -1, -1):
            if excess == 0:
                break
            if learned[i] not in alphabet_tokens:
                keep[i] = False
                excess -= 1
        info.trimmed = keep.count(False)
        learned = [t for t, k in zip(learned, keep) if k]
    info.kept = len(learned)
    return specials + learned + missing, info
