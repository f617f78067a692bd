"""Tiny encode outputs of several languages for the trainer's multilingual tests: one folder per
language as `pipeline encode` lays it out, with the encode manifest that records the tokenizer
(its fingerprint, as pipeline/stages/encode.py's tokenizer_record writes it).

    folders = language_dirs(root, {"hr": (96, 64), "sr": (40,)}, vocab_file)   # {code: folder}
    language_argv(folders, base_args(...))     # base_args' --input_dir X -> LANG=DIR per language
"""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.synthetic_shards import write_shard


def write_encode_manifest(folder: Path, vocab) -> None:
    """The encode manifest's tokenizer record of `vocab` (a vocab.txt or its folder)."""
    from vocab.kinds import load_tokenizer

    spec = load_tokenizer(vocab)
    (Path(folder) / "manifest.json").write_text(json.dumps({
        "stage": "encode", "vocab": str(Path(spec.vocab_file).resolve()),
        "tokenizer": {"folder": str(spec.folder.resolve()), "kind": spec.piece_model,
                      "fingerprint": spec.fingerprint, "size": spec.size, "pad_id": spec.pad_id}}),
        encoding="utf-8")


def language_dirs(root: Path, sizes: dict, vocab=None, test=(32,), seq_len=32, max_pred=5,
                  vocab_size=200) -> dict[str, str]:
    """{code: ROOT/code/hdf5_.../} with {code}wiki/{code}wiki_{training,test}_{i}.hdf5 of
    `sizes[code]` (and `test`) rows; with `vocab`, the encode manifest naming it."""
    out = {}
    for n_lang, (code, train) in enumerate(sorted(sizes.items())):
        d = Path(root) / code / f"hdf5_lower_case_0_seq_len_{seq_len}_max_pred_{max_pred}"
        for i, n in enumerate(train):
            write_shard(d / f"{code}wiki" / f"{code}wiki_training_{i}.hdf5", n, seq_len, max_pred,
                        vocab_size, seed=100 * n_lang + i)
        for i, n in enumerate(test):
            write_shard(d / f"{code}wiki" / f"{code}wiki_test_{i}.hdf5", n, seq_len, max_pred,
                        vocab_size, seed=1000 + 100 * n_lang + i)
        if vocab is not None:
            write_encode_manifest(d, vocab)
        out[code] = str(d)
    return out


def language_argv(folders: dict, argv: list[str]) -> list[str]:
    """`argv` (tests/helpers/trainer_cli.base_args) with its --input_dir given per language."""
    i = argv.index("--input_dir")
    return argv[:i] + [x for code, d in folders.items() for x in ("--input_dir", f"{code}={d}")] + argv[i + 2:]
