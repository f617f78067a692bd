"""The HDF5 contract between `pipeline encode` and every reader (NVIDIA DeepLearningExamples,
HDF5 era): the datasets, their dtypes and shapes, how a file is checked, the masked-label
rule, and the name of the folder encode writes.

One file per shard, gzip-compressed datasets, N instances, L = max seq, P = max predictions:

    input_ids             int32 [N, L]  [CLS] A [SEP] B [SEP], padded with the vocabulary's
                                        pad id (0 for BERT's vocabs, whose [PAD] is 0; 1 for
                                        XLM-R's <pad>); a tokenizer's own cls/sep (<s>, </s>)
    input_mask            int8  [N, L]  1 real token, 0 padding
    segment_ids           int8  [N, L]  0 for [CLS] A [SEP], 1 for B [SEP] (0 where the
                                        tokenizer's post-processor gives B 0: RoBERTa, XLM-R),
                                        0 padding
    masked_lm_positions   int32 [N, P]  ascending positions, padded with 0
    masked_lm_ids         int32 [N, P]  original ids at those positions, padded with 0
    next_sentence_labels  int8  [N]     1 = B is a random sentence

Files with `training` in the name are training data, `test` files are held out. A reader
finds the number of real predictions as the index of the first 0 in masked_lm_positions, and
padding from input_mask (never from an assumed pad id).

One optional dataset, written only for scripts whose words a segmenter finds (Chinese,
Japanese, Thai; NVIDIA's loader reads its keys by name and never sees it):

    word_starts           int8  [N, L]  1 where a token starts a whole word ([CLS] and [SEP]
                                        are words of their own), 0 where it continues the
                                        word before it, 0 in padding

A whole word for masking is a position with 1 and the 0 positions after it. Without the
dataset a word is a piece and the `##` pieces after it.

One more, written by `encode --pack` (packed layout 2) and required in such files:

    doc_starts            int8  [N, L]  1 at position 0 of every row and at every document's
                                        own [CLS] inside it, 0 elsewhere and in padding: a
                                        row's segments are the runs of real tokens between
                                        these marks, each of one document

Root attributes, each written only when it applies (files of sentence pairs encoded with a
vocab.txt have none, so they stay byte for byte what they were):

    packed = 2                          packed rows (`encode --pack`), layout 2: documents
                                        back to back, each `[CLS] tokens [SEP]`, a row that
                                        continues a document begins with an inserted [CLS],
                                        doc_starts marks the segments; no sentence pairs
                                        (next_sentence_labels all 0). 1: the layout before
                                        (one [CLS] a row, a [SEP] after each document, no
                                        doc_starts); files older still have no attribute and
                                        lie in a folder ending in `_packed`
    tokenizer_fingerprint = "<hex>"     encoded with a transformers tokenizer (`encode
                                        --tokenizer`): the sha256 of its tokenizer.json, which
                                        a reader compares with its model's tokenizer

Usage:
    shape = check_file(path)            # FileShape(n, seq_len, max_pred, ...); HDF5FormatError if not
    labels = masked_lm_labels(positions, ids)   # -1 where there is no prediction
    output_folder_name(lower_case=False, max_seq=128, max_pred=20, dupe_factor=5)
    is_packed(path)                     # the file's `packed` attribute, else a *_packed folder
    packed_layout(path)                 # 0 not packed, 1 the old packed rows, 2 PACKED_LAYOUT
    file_tokenizer_fingerprint(path)    # the `tokenizer_fingerprint` attribute, or None
    maskable_tokens(seq_len, packed)    # the tokens of a full row that masking may choose
    training_text(input_dir)            # what the training files hold of the text (the passes)

Beside the files, encode's manifest.json records what the trainer counts its passes by
(TRAINING_TEXT; read with `training_text`, a small JSON, no file opened): the training rows,
the text's tokens in the training shards (once, whatever the dupe factor), the dupe factor, and
per source its tokens there (weights' copies included, split by its bytes in the shards) and
its `shard --weight`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from common.encode_manifest import encode_manifest

# key -> (dtype, width: "L" max seq, "P" max predictions, None a vector)
DATASETS = {
    "input_ids": (np.int32, "L"),
    "input_mask": (np.int8, "L"),
    "segment_ids": (np.int8, "L"),
    "masked_lm_positions": (np.int32, "P"),
    "masked_lm_ids": (np.int32, "P"),
    "next_sentence_labels": (np.int8, None),
}

# Present only where encode knows segmenter words (see the module doc); same checks when present.
OPTIONAL_DATASETS = {
    "word_starts": (np.int8, "L"),
    "doc_starts": (np.int8, "L"),      # required in packed layout >= 2 (check_file)
}

# Encode's defaults that name its output folder (one place: the CLI, `run` and the demo read them).
MASKED_LM_PROB = 0.15
RANDOM_SEED = 12345
DUPE_FACTOR = 5
SHORT_SEQ_PROB = 0.1

# Held-out (test) instances an evaluation needs before its figures mean much; the trainer's
# eval and `pipeline report` say so in one line below it.
MIN_EVAL_INSTANCES = 1000


def few_eval_instances(n: int) -> str | None:
    """One line when `n` held-out instances are too few to judge a model on, else None."""
    if n >= MIN_EVAL_INSTANCES:
        return None
    return (f"eval on only {n:,} held-out instances (under {MIN_EVAL_INSTANCES:,}) means little: "
            "hold out more text with `pipeline shard --min-test-sentences N` and encode again")


class HDF5FormatError(ValueError):
    """A file does not follow the contract; the message names the file and what is wrong."""


@dataclass(frozen=True)
class FileShape:
    num_samples: int
    seq_len: int
    max_pred: int
    packed_attribute: int | None = None   # the file's PACKED_ATTR as a layout, None without one
    optional: tuple[str, ...] = ()         # the OPTIONAL_DATASETS the file has


def check_file(path: str | os.PathLike) -> FileShape:
    """Check one file against the contract: every dataset present (`doc_starts` too in packed
    layout 2), integer arrays of the right rank, shapes that agree. Any integer dtype is
    accepted (other writers use int64). Its metadata only, in one opening: no dataset is read."""
    import h5py

    try:
        fh = h5py.File(path, "r")
    except OSError as exc:
        raise HDF5FormatError(f"{path}: not a readable HDF5 file ({exc})") from None
    with fh:
        missing = [k for k in DATASETS if k not in fh]
        if missing:
            raise HDF5FormatError(f"{path}: wrong schema, it lacks {', '.join(missing)}")
        layout = _layout_value(fh.attrs.get(PACKED_ATTR))
        if layout is not None and layout >= 2 and "doc_starts" not in fh:
            raise HDF5FormatError(
                f"{path}: wrong schema, packed layout {layout} (attribute {PACKED_ATTR}) needs a "
                "doc_starts dataset [N, L] and the file has none: encode it again with "
                "`pipeline encode --pack`")
        shapes = {}
        present = {**DATASETS, **{k: v for k, v in OPTIONAL_DATASETS.items() if k in fh}}
        for key, (_, width) in present.items():
            ds = fh[key]
            ndim = 1 if width is None else 2
            if not isinstance(ds, h5py.Dataset) or len(ds.shape) != ndim or ds.dtype.kind not in "iu":
                raise HDF5FormatError(
                    f"{path}: wrong schema, dataset {key} is {getattr(ds, 'dtype', '?')} "
                    f"{getattr(ds, 'shape', '?')}, expected an integer array of rank {ndim}")
            shapes[key] = ds.shape
    n = shapes["input_ids"][0]
    seq_len = shapes["input_ids"][1]
    max_pred = shapes["masked_lm_positions"][1]
    width = {"L": seq_len, "P": max_pred}
    bad = [k for k in present if shapes[k][0] != n]
    bad += [k for k, (_, w) in present.items() if w is not None and shapes[k][1] != width[w]]
    if bad:
        raise HDF5FormatError(f"{path}: wrong schema, inconsistent shapes "
                              f"{ {k: shapes[k] for k in present} }")
    return FileShape(int(n), int(seq_len), int(max_pred), layout,
                     tuple(k for k in OPTIONAL_DATASETS if k in present))


def masked_lm_labels(positions: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Labels: the original id up to the first 0 in `positions` (NVIDIA's rule), -1 after."""
    real = np.cumprod(positions != 0, axis=1).astype(bool)
    return np.where(real, ids, -1)


def output_folder_name(lower_case: bool, max_seq: int, max_pred: int,
                       masked_lm_prob: float = MASKED_LM_PROB, seed: int = RANDOM_SEED,
                       dupe_factor: int = DUPE_FACTOR, whole_word: bool = False,
                       strip_accents: bool = False, short_seq_prob: float = SHORT_SEQ_PROB,
                       packed: bool = False, tokenizer_suffix: str = "") -> str:
    """NVIDIA's folder name, plus a suffix for each data-changing option it does not name;
    `tokenizer_suffix` names a transformers tokenizer (`_tok-NAME-HASH`: two tokenizers never
    share a folder); packed rows (encode --pack) end in PACKED_SUFFIX, which the trainer reads
    (is_packed)."""
    name = (f"hdf5_lower_case_{int(bool(lower_case))}_seq_len_{max_seq}_max_pred_{max_pred}"
            f"_masked_lm_prob_{masked_lm_prob:g}_random_seed_{seed}_dupe_factor_{dupe_factor}")
    if short_seq_prob != SHORT_SEQ_PROB and not packed:   # packing has no short rows
        name += f"_short_seq_prob_{short_seq_prob:g}"
    if whole_word:
        name += "_wwm"
    if strip_accents:
        name += "_strip_accents"
    name += tokenizer_suffix
    if packed:
        name += PACKED_SUFFIX
    return name


# The folder of packed rows (no sentence pairs: next-sentence labels mean nothing) ends in this.
PACKED_SUFFIX = "_packed"
# The root attribute of a file of packed rows, its layout (PACKED_LAYOUT; 1 in files of the
# layout before); absent from files of pairs.
PACKED_ATTR = "packed"
# The packed layout encode writes: `[CLS] doc [SEP]` segments, marked by the doc_starts dataset.
PACKED_LAYOUT = 2
# The root attribute of a file encoded with a transformers tokenizer: its fingerprint (hex).
TOKENIZER_ATTR = "tokenizer_fingerprint"


def maskable_tokens(seq_len: int, packed: bool) -> int:
    """The tokens of a full row that masking may choose, which the masked-LM rate is measured
    against: all but [CLS] in a packed row, all but [CLS] and the two [SEP]s in a pair."""
    return seq_len - 1 if packed else seq_len - 3


def is_packed(path: str | os.PathLike) -> bool:
    """Whether `path` holds packed rows (encode --pack), in any layout. An HDF5 file says so in
    its PACKED_ATTR attribute, wherever it is copied; a file written before the attribute
    existed (or a folder) is packed when it lies in a folder whose name ends in PACKED_SUFFIX."""
    return packed_layout(path) > 0


def packed_layout(path: str | os.PathLike) -> int:
    """The packed layout of `path`: 0 not packed (sentence pairs), 1 the packed rows before
    doc_starts, 2 (PACKED_LAYOUT) rows of `[CLS] doc [SEP]` segments with doc_starts. The
    file's PACKED_ATTR says it; a file without it (or a folder) in a folder whose name ends in
    PACKED_SUFFIX is layout 1."""
    p = Path(path)
    if p.is_file():
        marked = _packed_attribute(p)
        if marked is not None:
            return marked
    return folder_packed_layout(p)


def folder_packed_layout(path: str | os.PathLike) -> int:
    """1 when `path` is or lies in a folder whose name ends in PACKED_SUFFIX (packed rows written
    before files said so), else 0; nothing is opened."""
    p = Path(path).resolve()
    return int(any(q.name.endswith(PACKED_SUFFIX) for q in (p, *p.parents)))


def _layout_value(value) -> int | None:
    """A PACKED_ATTR value as a layout number (True and 1 alike); None when absent."""
    if value is None:
        return None
    try:
        return max(0, int(value))
    except (TypeError, ValueError):   # not a number (another writer's mark): packed or not
        return int(bool(value))


def _packed_attribute(path: Path) -> int | None:
    """The file's PACKED_ATTR as a layout; None when it has none (or is no readable HDF5 file)."""
    import h5py

    try:
        with h5py.File(path, "r") as fh:
            value = fh.attrs.get(PACKED_ATTR)
    except OSError:
        return None
    return _layout_value(value)


def file_tokenizer_fingerprint(path: str | os.PathLike) -> str | None:
    """The TOKENIZER_ATTR of a file (the sha256 of the tokenizer.json it was encoded with), or
    None for a file without it (encoded with a vocab.txt, whose fingerprint the encode manifest
    records) or no readable HDF5 file."""
    import h5py

    try:
        with h5py.File(path, "r") as fh:
            value = fh.attrs.get(TOKENIZER_ATTR)
    except OSError:
        return None
    if isinstance(value, bytes):
        value = value.decode("ascii")
    return None if value is None else str(value)


# The encode manifest's record of what its training files hold of the text (training_text).
TRAINING_TEXT = "training_text"


@dataclass(frozen=True)
class TrainingText:
    """What an encode folder's training files hold of the text: `rows` instances made of
    `dupe_factor` copies of a text of `tokens` tokens (the training shards', weights' copies
    included); `sources`: {source: (its tokens among them, its shard weight)}."""

    rows: int
    tokens: int
    dupe_factor: int = 1
    sources: dict = field(default_factory=dict)


def training_text_record(shards: list[dict], sources: dict, dupe_factor: int) -> dict:
    """TRAINING_TEXT of an encode: `shards` its per-shard counts (shard, instances, tokens),
    `sources` the shard stage's counts per source (pipeline/core/sources.py: shard_sources), a
    source's tokens its share of the training bytes (of its documents where bytes are not known)."""
    train = [s for s in shards if "_training_" in s["shard"]]
    tokens = sum(int(s["tokens"]) for s in train)
    key = "training_bytes" if all("training_bytes" in c for c in sources.values()) else "training_documents"
    total = sum(c.get(key, 0) for c in sources.values())
    return {"rows": sum(int(s["instances"]) for s in train), "tokens": tokens, "dupe_factor": int(dupe_factor),
            "sources": {name: {"tokens": round(tokens * c.get(key, 0) / total) if total else 0,
                               "weight": float(c.get("weight", 1.0))} for name, c in sources.items()}}


def training_text(input_dir) -> TrainingText | None:
    """TRAINING_TEXT of the encode manifest of `input_dir` (or of the folder above it), made
    from its per-shard counts for an encode written before the record; None without a manifest."""
    record = encode_manifest(input_dir, TRAINING_TEXT).get(TRAINING_TEXT)
    if record is None:
        found = encode_manifest(input_dir, "shards")
        if not found.get("shards"):
            return None
        record = training_text_record(found["shards"], found.get("sources") or {},
                                      (found.get("options") or {}).get("dupe_factor", 1))
    if not record.get("rows"):
        return None
    return TrainingText(int(record["rows"]), int(record["tokens"]), int(record.get("dupe_factor", 1)),
                        {k: (int(v["tokens"]), float(v.get("weight", 1.0))) for k, v in
                         (record.get("sources") or {}).items()})
