"""Train a sentencepiece model (BPE or unigram) on word counts, deterministically.

The input is the `word<TAB>count` file written by sample.write_word_counts: words already
split the way BERT splits, so every piece lies inside one word. sentencepiece gets exactly that
file (no sampling, no shuffling of its own), a fixed thread count and no text normalisation of
its own (BERT's normaliser already ran; NFKC would produce pieces WordPiece never sees).

Usage:
    model = train_sentencepiece("sample.tsv", "out/spm", vocab_size=32000, model_type="bpe")
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

from vocab.core.layout import TrainingError

MODEL_TYPES = ("bpe", "unigram")
# Fixed, never taken from --workers: unigram's EM sums per-thread partial counts, so a
# different thread count could change the floats and with them the vocab.
SPM_THREADS = 2


def required_chars(char_counts: Counter, character_coverage: float = 0.9999) -> int:
    """How many characters sentencepiece must keep as pieces of their own (its `required_chars`):
    the most frequent ones until they cover `character_coverage` of all the characters counted;
    a vocab smaller than that fails to train ("Vocabulary size is smaller than required_chars")."""
    total = sum(char_counts.values())
    kept = covered = 0
    for _, n in char_counts.most_common():
        if covered >= character_coverage * total:
            break
        covered += n
        kept += 1
    return kept


def train_sentencepiece(word_counts: str | os.PathLike, model_prefix: str | os.PathLike,
                        vocab_size: int, model_type: str = "bpe",
                        character_coverage: float = 0.9999, seed: int = 12345,
                        max_piece_length: int = 16, split_by_script: bool = True) -> Path:
    """Train on a tsv of word counts; return the path of `<model_prefix>.model`.

    Only `<unk>` is reserved (no <s>, </s>, <pad>): the BERT specials are added on conversion.
    hard_vocab_limit is off, so a small corpus yields a smaller vocab instead of an error.
    split_by_script=False lets a piece mix scripts: MeCab words do ("住ん": kanji + kana).
    """
    if model_type not in MODEL_TYPES:
        raise TrainingError(f"model type {model_type!r} is not one of {', '.join(MODEL_TYPES)}")
    spm.set_random_generator_seed(int(seed))
    try:
        spm.SentencePieceTrainer.train(
            input=str(word_counts), input_format="tsv", model_prefix=str(model_prefix),
            model_type=model_type, vocab_size=int(vocab_size),
            character_coverage=float(character_coverage),
            input_sentence_size=0, shuffle_input_sentence=False, hard_vocab_limit=False,
            normalization_rule_name="identity", remove_extra_whitespaces=False,
            add_dummy_prefix=True, split_by_whitespace=True,
            split_by_unicode_script=bool(split_by_script),
            max_sentencepiece_length=int(max_piece_length), max_sentence_length=1 << 14,
            unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1,
            num_threads=SPM_THREADS, minloglevel=2,
        )
    except RuntimeError as exc:
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
        hint = ""
        if "required_chars" in msg or "smaller than" in msg:
            hint = ": raise --vocab-size or lower --character-coverage"
        elif "too high" in msg or "too small" in msg:
            hint = ": lower --vocab-size or give more text"
        raise TrainingError(f"sentencepiece training failed ({msg}){hint}") from None
    model = Path(f"{model_prefix}.model")
    forget_paths(model)
    return model


def forget_paths(model_file: Path) -> None:
    """sentencepiece records its training input's and model prefix's paths in the model
    (trainer_spec.input, .model_prefix): keep only their names, so that the same input in
    another data directory or on another node gives the same bytes."""
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model_file.read_bytes())
    spec = proto.trainer_spec
    names = [Path(p).name for p in spec.input]
    del spec.input[:]
    spec.input.extend(names)
    spec.model_prefix = Path(spec.model_prefix).name
    model_file.write_bytes(proto.SerializeToString(deterministic=True))
