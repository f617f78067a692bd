"""One `pipeline vocab` build's settings, checked: what every step of the stage reads and what
its manifest records (pipeline/stages/vocab.py). What only one tokenizer kind asks of them (a
byte-level BPE's least size, MeCab words without --strip-accents) its kind checks
(vocab/kinds: `check_training`).

Usage:
    check_options(vocab_size, input_sentence_size, character_coverage, from_spm)
    s = VocabSettings(32000, "bpe", 1_000_000, 0.9999, 12345, False, False, None, None)
    s.options("hu", eval_path=None)           # the manifest's options
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from vocab.core.layout import NUM_SPECIALS, TrainingError


class SettingsError(TrainingError):
    """An option of `pipeline vocab` is out of range or contradicts another; the message says which."""


def check_options(vocab_size, input_sentence_size, character_coverage, from_spm):
    if vocab_size < NUM_SPECIALS + 100:
        raise SettingsError(f"--vocab-size {vocab_size} is too small: BERT's special tokens take "
                         f"{NUM_SPECIALS} ids; use at least {NUM_SPECIALS + 100} (typically 16000-64000)")
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

    def options(self, lang: str, eval_path, character_coverage: bool = True) -> dict:
        """The manifest's options: what a rerun must match to skip the stage (`character_coverage`
        False: the kind has none, every byte being a piece)."""
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
        if not character_coverage:
            options.pop("character_coverage", None)
        return options
