"""The data's tokenizer and the run's: which tokenizer an HDF5 folder was encoded with, and any
vocabulary the trainer takes (a vocab.txt, or a transformers tokenizer folder with tokenizer.json:
vocab.kinds.load_tokenizer, whatever its kind).

    spec = load_spec(path)                        # the tokenizer (vocab/kinds); VocabError in one line
    data = data_tokenizer(input_dir, first_file)  # DataTokenizer(fingerprint, where) or None
    encode_vocab(input_dir)                       # the vocab (file or folder) encode recorded

The data's fingerprint is, first, the files' own `tokenizer_fingerprint` attribute (encode
--tokenizer: pipeline/encoding/hdf5_format.py), then the encode manifest's record of its
tokenizer ("tokenizer": {"fingerprint"}), then the fingerprint of the vocabulary the manifest
names ("vocab", for manifests written before it recorded one); None when none of them is there
(hand-made files), and then nothing is compared.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.encoding.hdf5_format import file_tokenizer_fingerprint
from common.encode_manifest import encode_manifest
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer


def load_spec(path):
    """The vocabulary at `path` (a vocab.txt or its folder, a tokenizer folder), of its kind."""
    return load_tokenizer(path)


def encode_vocab(input_dir) -> Path | None:
    """The vocab (a vocab.txt, or a tokenizer folder) that `pipeline encode` recorded in its
    manifest (in --input_dir or the folder above it), if it still exists."""
    vocab = encode_manifest(input_dir, "vocab").get("vocab")
    if isinstance(vocab, str) and Path(vocab).exists():
        return Path(vocab)
    return None


@dataclass(frozen=True)
class DataTokenizer:
    fingerprint: str
    where: str       # in words: the tokenizer's folder as encode recorded it, or the files' attribute


def data_tokenizer(input_dir, first_file=None) -> DataTokenizer | None:
    """The tokenizer --input_dir was encoded with (see the module docstring)."""
    manifest = encode_manifest(input_dir, "vocab")
    record = manifest.get("tokenizer") if isinstance(manifest.get("tokenizer"), dict) else {}
    named = record.get("folder") or manifest.get("vocab")
    where = f"the tokenizer {named}" if named else "its tokenizer"
    fingerprint = file_tokenizer_fingerprint(first_file) if first_file is not None else None
    fingerprint = fingerprint or record.get("fingerprint")
    if fingerprint is None and isinstance(manifest.get("vocab"), str) and Path(manifest["vocab"]).exists():
        try:
            fingerprint = load_spec(manifest["vocab"]).fingerprint
        except VocabError:
            return None
    return DataTokenizer(str(fingerprint), where) if fingerprint else None
