"""The encode stage's HDF5 shards under --input_dir: found, checked against the HDF5 contract
(pipeline/encoding/hdf5_format.py), read.

    shards = find_shards(input_dir)        # Shards(train=[ShardInfo...], test=[...]); DataError
    shards.packed                          # rows of `encode --pack` (no sentence pairs)
    shards.doc_starts                      # ... that mark where their documents start
    arrays = read_shard(path, rows)        # {dataset: numpy array}
    read_shard(path, rows, optional=("doc_starts",))   # and those optional datasets the file has

What a run needs of a file before training (its rows, their length and predictions, its packed
layout) comes from encode's manifest beside the files (`encode_index`: written last, after every
file was renamed into place, so its presence says the folder is complete) for each file it lists
that is still the one encode wrote (its size, no change after the manifest): a folder of
thousands of shards starts without opening them. Any other file (hand-made files, NVIDIA's, one
rewritten since) is opened once, for its metadata only (check_file), one file at a time. A file
is read whole only when the loader reaches it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.encoding.hdf5_format import (
    DATASETS,
    OPTIONAL_DATASETS,
    HDF5FormatError,
    check_file,
    folder_packed_layout,
)
from common.encode_manifest import encode_manifest_at
from common.os_errors import is_os_fault, os_error_message

DOC_STARTS = "doc_starts"   # the optional dataset of packed rows: where each document starts
# what to do about a file that breaks the HDF5 contract (pipeline/encoding/hdf5_format.py)
_HINT = "make shards with `pipeline encode` (NVIDIA's HDF5 format, see docs/hdf5_format.md)"


class DataError(ValueError):
    """Unusable training data or loader state; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class ShardInfo:
    path: Path
    num_samples: int
    seq_len: int
    max_pred: int
    doc_starts: bool = False   # packed rows that mark where documents start (DOC_STARTS)
    packed_layout: int = 0     # 0 sentence pairs, else encode --pack's layout (hdf5_format.packed_layout)


@dataclass(frozen=True)
class Shards:
    train: list[ShardInfo]
    test: list[ShardInfo]

    @property
    def seq_len(self) -> int:
        return self.train[0].seq_len

    @property
    def max_pred(self) -> int:
        return self.train[0].max_pred

    @property
    def packed(self) -> bool:
        """Rows of `encode --pack`: no sentence pairs, next-sentence labels all 0."""
        return any(s.packed_layout > 0 for s in self.train)

    @property
    def doc_starts(self) -> bool:
        """Every file (training and test) marks where its rows' documents start."""
        return all(s.doc_starts for s in self.train + self.test)


def inspect_shard(path: str | Path) -> ShardInfo:
    """Check one file against the HDF5 contract (names, ranks, integer dtypes, shapes), in one
    opening of its metadata."""
    path = Path(path)
    try:
        shape = check_file(path)
    except HDF5FormatError as exc:
        if is_os_fault(exc.__context__):   # unreadable: a failing disk, no permission
            raise DataError(os_error_message(exc.__context__, path, where="--input_dir")) from None
        raise DataError(f"{exc}; {_HINT}") from None
    layout = shape.packed_attribute if shape.packed_attribute is not None else folder_packed_layout(path)
    return ShardInfo(path, shape.num_samples, shape.seq_len, shape.max_pred, DOC_STARTS in shape.optional, layout)


def encode_index(root: Path) -> dict[Path, tuple[int, int, ShardInfo]]:
    """{file: (its size in bytes, the manifest's time (ns), its ShardInfo)} from the manifest
    `pipeline encode` wrote in `root` or the folder above it (a language's subfolder); {} when
    there is none that lists its files' instances. The files' paths are the manifest's folder
    joined with the relative paths it lists, as `root.rglob` spells them (no file resolved: that
    would cost more than the rest of the start on thousands of shards)."""
    folder, manifest = encode_manifest_at(root, "shards")
    try:
        options, outputs = manifest["options"], manifest["outputs"]
        instances = {s["file"]: int(s["instances"]) for s in manifest["shards"]}
        seq_len, max_pred = int(options["max_seq"]), int(options["max_pred"])
        written = (folder / "manifest.json").stat().st_mtime_ns
    except (KeyError, TypeError, ValueError, OSError):
        return {}
    if manifest.get("stage") != "encode":
        return {}
    # packed rows: the manifest's rules name the layout; packed runs before layout 2 had none
    layout = int((manifest.get("rules") or {}).get("packed_layout", 1)) if options.get("pack") else 0
    index = {}
    for out in outputs:
        path = folder / out["path"]
        if path.name in instances:
            index[path] = (int(out["bytes"]), written,
                           ShardInfo(path, instances[path.name], seq_len, max_pred, layout >= 2, layout))
    return index


def _shard_info(path: Path, index: dict) -> ShardInfo:
    """The file as encode's manifest lists it, when it is still the file encode wrote (the size
    listed, not modified after the manifest was written: files of a few rows all have one size,
    that of their chunks), else as the file itself says (inspect_shard)."""
    size, written, info = index.get(path, (None, None, None))
    try:
        stat = path.stat() if info is not None else None
    except OSError:   # a dangling link, no permission: inspect_shard's one line says which
        stat = None
    if stat is not None and stat.st_size == size and stat.st_mtime_ns <= written:
        return info
    return inspect_shard(path)


def is_test_file(path: Path) -> bool:
    """A held-out file of an encode folder (`*test*`, not `*training*`)."""
    return "test" in path.name and "training" not in path.name


def find_shards(input_dir: str | Path, label: str | None = None) -> Shards:
    """All `*.hdf5` under `input_dir` (recursively): `*training*` files train, `*test*` evaluate.
    `label`: how the messages name the folder (default `--input_dir DIR`)."""
    root = Path(input_dir)
    where = label or f"--input_dir {root}"
    if not root.is_dir():
        raise DataError(f"{where} is not a directory: give the encode stage's "
                        "hdf5_... folder (or its {lang}wiki/ subfolder)")
    files = sorted(root.rglob("*.hdf5"), key=lambda p: p.relative_to(root).as_posix())
    index = encode_index(root)
    train = [_shard_info(p, index) for p in files if "training" in p.name]
    test = [_shard_info(p, index) for p in files if is_test_file(p)]
    if not train:
        raise DataError(f"{where} holds no *training*.hdf5 files: run `pipeline encode` "
                        "and point --input_dir at its hdf5_... folder")
    train = [s for s in train if s.num_samples > 0] or train
    shapes = {(s.seq_len, s.max_pred) for s in train + test}
    if len(shapes) > 1:
        raise DataError(f"{where} mixes shards of different (seq_len, max_pred) "
                        f"{sorted(shapes)}: give one encode output folder (phase 1 or phase 2)")
    return Shards(train, test)


def read_shard(path: Path, index: np.ndarray | None = None,
               optional: bool | Iterable[str] = False) -> dict[str, np.ndarray]:
    """Whole datasets at once (each gzip chunk decompressed once), then `index` rows; with
    `optional` True, also the contract's optional datasets the file has (word_starts,
    doc_starts); given names (e.g. ("doc_starts",)), those of them the file has."""
    import h5py

    if isinstance(optional, bool):
        wanted = list(OPTIONAL_DATASETS) if optional else []
    else:
        wanted = [k for k in OPTIONAL_DATASETS if k in set(optional)]
    out = {}
    with h5py.File(path, "r") as fh:
        keys = list(DATASETS) + [k for k in wanted if k in fh]
        for key in keys:
            arr = fh[key][()]
            if index is not None and len(index) and int(index.max()) >= len(arr):
                raise DataError(f"{path} holds {len(arr)} rows, fewer than listed when the run found it: "
                                "it changed since `pipeline encode` wrote it; encode it again")
            out[key] = arr if index is None else arr[index]
    return out
