"""The kind `bytelevel-bpe`: a byte-level BPE tokenizer.json as RoBERTa, GPT-2 and ModernBERT use,
and the one `pipeline vocab --model-type bytelevel-bpe` trains (vocab/training/bytelevel.py:
RoBERTa's layout, `<pad>` 1).

Its pieces are bytes spelled in GPT-2's printable alphabet (`Ġ` is the space that starts a
word), so any text encodes without an unknown token, and a piece's text for vocabulary
adaptation is those bytes decoded (`piece_key`). Loading, ids and encoding are any fast
tokenizer's (vocab/kinds/fast.py). Trained on the sample's sentences themselves (not word
counts), every byte a piece: no character coverage.

Usage:
    spec = load_tokenizer("data/hu/vocab")         # after `pipeline vocab --model-type bytelevel-bpe`
    spec.piece_key("Ġház")                          # (b"h\xc3\xa1z", True)
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

from common.atomic import atomic_path, write_json_atomic
from vocab.core.layout import SPECIAL_TOKENS_MAP, TOKENIZER_CONFIG, TOKENIZER_JSON, TrainingError
from vocab.core.segmenters import MecabSegmenter
from vocab.core.tokenizer_json import word_marks
from vocab.kinds.base import Found, TrainingJob
from vocab.kinds.fast import TokenizerSpec
from vocab.training.bytelevel import (
    MIN_VOCAB_SIZE,
    MODEL_TYPE,
    ROLES,
    check_size,
    tokenizer_config,
    train_bytelevel_bpe,
)
from vocab.training.words import BertWords

BYTE_MARK = "\u0120"   # "Ġ": the space, in GPT-2's byte alphabet


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet back to bytes: the printable bytes stand for themselves, the
    others for chr(256 + n) in order (so "Ġ" is the space)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, n = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + n)] = b
            n += 1
    return chars


BYTES = byte_decoder()


@dataclass(frozen=True)
class ByteLevelBPE(TokenizerSpec):
    """A byte-level BPE tokenizer.json (see the module doc)."""

    kind = "bytelevel-bpe"
    description = ("a byte-level BPE tokenizer.json (RoBERTa's layout): `pipeline vocab --model-type "
                   "bytelevel-bpe`, or a RoBERTa/GPT-2 folder")
    model_types = (MODEL_TYPE,)
    keeps_sample_text = True

    @classmethod
    def claims(cls, found: Found) -> bool:
        """A BPE tokenizer.json whose pieces are bytes (a ByteLevel pre-tokenizer or decoder)."""
        return (super().claims(found) and found.model_type == "BPE"
                and word_marks(found.tokenizer_json)[0] == BYTE_MARK)

    def piece_key(self, token: str) -> tuple[bytes, bool]:
        if all(c in BYTES for c in token):   # decode the alphabet
            raw = bytes(BYTES[c] for c in token)
            return (raw[1:], True) if raw.startswith(b" ") else (raw, False)
        return super().piece_key(token)

    # -- training -----------------------------------------------------------------------------
    @classmethod
    def check_training(cls, vocab_size, from_spm, strip_accents, segmenter) -> None:
        if from_spm is not None:
            raise TrainingError("--from-spm converts a sentencepiece model to a WordPiece vocab.txt: "
                                "leave out --model-type bytelevel-bpe")
        check_size(vocab_size)
        if segmenter == MecabSegmenter.name:
            raise TrainingError("--model-type bytelevel-bpe trains on raw text, not on MeCab words: pass "
                                "--word-segmenter none, or use --model-type bpe or unigram for a MeCab vocab")

    @classmethod
    def least_vocab_size(cls, alphabet, char_counts, character_coverage=0.9999) -> int:
        return MIN_VOCAB_SIZE   # the special tokens and the 256 bytes, whatever the text

    @classmethod
    def sample_words(cls, lower_case, strip_accents, segmenter):
        return BertWords.of(lower_case, strip_accents, segmenter)

    @classmethod
    def train(cls, job: TrainingJob) -> tuple[dict, float]:
        """tokenizers' trainer on the sample's sentences (step "train"), written as a transformers
        tokenizer folder; (its record: pieces and merges, the seconds it took)."""
        info = job.step("train", lambda: cls._train(job))
        if info["vocab_size"] < job.vocab_size:
            job.say("warning: %s pieces, fewer than --vocab-size %s: the input has too little text "
                    "for that many merges", f"{info['vocab_size']:,}", f"{job.vocab_size:,}", warning=True)
        return info, info["seconds"]

    @classmethod
    def _train(cls, job: TrainingJob) -> dict:
        t0 = time.time()
        job.say("training byte-level BPE on %s sentences", f"{job.sample.get('sample_sentences', 0):,}")
        tok = train_bytelevel_bpe(job.work / "sample.txt", job.vocab_size, job.lower_case, job.strip_accents)
        job.out.mkdir(parents=True, exist_ok=True)
        with atomic_path(job.out / TOKENIZER_JSON) as tmp:
            tok.save(str(tmp))
        write_json_atomic(job.out / SPECIAL_TOKENS_MAP, dict(ROLES))
        write_json_atomic(job.out / TOKENIZER_CONFIG, tokenizer_config(job.lower_case))
        merges = json.loads(tok.to_str())["model"]["merges"]
        return {"vocab_size": tok.get_vocab_size(with_added_tokens=True), "merges": len(merges),
                "seconds": round(time.time() - t0, 3)}
