"""The manifest `pipeline encode` wrote beside an HDF5 folder: in --input_dir itself, or in the
folder above it (a language's subfolder of a joint encode). Plain JSON: no torch, no h5py.

    encode_manifest(input_dir, "vocab")     # {} when neither folder holds one with that key
    folder, manifest = encode_manifest_at(input_dir, "shards")   # and the folder it is in (None, {})

Read by trainer/data/vocabulary.py (the tokenizer), trainer/data/shards.py (the files' rows) and
trainer/config/encoded_rate.py (the masking rate); here because those rooms may not import each
other.
"""
from __future__ import annotations

import json
from pathlib import Path


def encode_manifest(input_dir, key: str) -> dict:
    """The first manifest.json of --input_dir and the folder above it that holds `key` ({} if none)."""
    return encode_manifest_at(input_dir, key)[1]


def encode_manifest_at(input_dir, key: str) -> tuple[Path | None, dict]:
    """(the folder, the manifest) of encode_manifest; (None, {}) when there is none."""
    for folder in (Path(input_dir), Path(input_dir).parent):
        try:
            found = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(found, dict) and key in found:
            return folder, found
    return None, {}
