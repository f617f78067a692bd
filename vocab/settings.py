"""One `pipeline vocab` build's settings, checked: what every step of the stage reads and what
its manifest records (pipeline/stages/vocab.py).

Usage:
    check_options(vocab_size, model_type, input_sentence_size, character_coverage, from_spm)
    s = VocabSettings(32000, "bpe", 1_000_000, 0.9999, 12345, False, False, None, None)
    s.options("hu", eval_path=None)           # the manifest's options
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .bytelevel import MIN_VOCAB_SIZE as BYTELEVEL_MIN_SIZE
from .bytelevel import MODEL_TYPE as BYTELEVEL
from .spec import NUM_SPECIALS
from .train import MODEL_TYPES as SPM_MODEL_TYPES

# sentencepiece's two (-> WordPiece vocab.txt), and byte-level BPE (-> tokenizer.json)
MODEL_TYPES = (*SPM_MODEL_TYPES, BYTELEVEL)


class SettingsError(ValueError):
    """An option of `pipeline vocab` is out of range or contradicts another; the message says which."""


def check_options(vocab_size, model_type, input_sentence_size, character_coverage, from_spm):
    if model_type == BYTELEVEL and from_spm is not None:
        raise SettingsError("--from-spm converts a sentencepiece model to a WordPiece vocab.txt: "
                         "leave out --model-type bytelevel-bpe")
    if model_type == BYTELEVEL and vocab_size < BYTELEVEL_MIN_SIZE:
        raise SettingsError(f"--vocab-size {vocab_size} is too small for byte-level BPE: its special tokens "
                            f"and 256 byte pieces take {BYTELEVEL_MIN_SIZE - 1} ids; use at least "
                            f"{BYTELEVEL_MIN_SIZE} (typically 32000-64000)")
    if vocab_size < NUM_SPECIALS + 100:
        raise SettingsError(f"--vocab-size {vocab_size} is too small: BERT's special tokens take "
                         f"{NUM_SPECIALS} ids; use at least {NUM_SPECIALS + 100} (typically 16000-64000)")
    if model_type not in MODEL_TYPES:
        raise SettingsError(f"--model-type {model_type!r} is not one of {', '.join(MODEL_TYPES)}")
    if input_sentence_size < 1:
        raise SettingsError("--input-sentence-size must be at least 1")
    if not 0 < character_coverage <= 1:
        raise SettingsError(f"--character-coverage {character_coverage} must be in (0, 1], e.g. 0.9999")
    if from_spm is not None and not Path(from_spm).is_file():
        raise SettingsError(f"--from-spm {from_spm} is not a file: give a sentencepiece .model file")


@dataclass(frozen=True)
class VocabSettings:
    """One build's settings, checked, as every step reads them."""

    vocab_size: int
    model_type: str
    input_sentence_size: int
    character_coverage: float
    seed: int
    lower_case: bool
    strip_accents: bool
    from_spm: Path | None
    segmenter: str | None   # the language's word segmenter, None for none

    @property
    def bytelevel(self) -> bool:
        """A byte-level BPE tokenizer.json instead of a WordPiece vocab.txt."""
        return self.model_type == BYTELEVEL

    @property
    def word_tokenizer(self) -> str | None:
        """"mecab" for a vocab on MeCab words (Japanese), else None: BERT's tokens."""
        return "mecab" if self.segmenter == "mecab" else None

    @property
    def sample_words(self) -> str | None:
        """The words sentencepiece learns from: MeCab's, Thai's (BERT leaves a whole Thai
        clause as one word), or BERT's (None; Chinese: BERT splits every character anyway)."""
        return self.segmenter if self.segmenter in ("mecab", "pythainlp") else None

    def options(self, lang: str, eval_path) -> dict:
        """The manifest's options: what a rerun must match to skip the stage."""
        options = {"lang": lang, "vocab_size": self.vocab_size, "model_type": self.model_type,
                   "input_sentence_size": self.input_sentence_size,
                   "character_coverage": self.character_coverage, "seed": self.seed,
                   "lower_case": bool(self.lower_case), "strip_accents": bool(self.strip_accents),
                   "from_spm": None if self.from_spm is None else {
                       "path": str(self.from_spm),
                       "sha256": hashlib.sha256(Path(self.from_spm).read_bytes()).hexdigest()},
                   # Only an explicit --eval is an option: test shards that appear after a
                   # finished run must not make `pipeline run` refuse to skip this stage.
                   "eval": None if eval_path is None else str(eval_path)}
        if self.segmenter is not None:   # only then: other languages' manifests stay as they were
            options["word_segmenter"] = self.segmenter
        if self.from_spm is not None:
            options = {k: v for k, v in options.items()
                       if k not in ("model_type", "input_sentence_size", "character_coverage")}
        if self.bytelevel:   # every byte is a piece: no character coverage
            del options["character_coverage"]
        return options
