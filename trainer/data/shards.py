"""The encode stage's HDF5 shards under --input_dir: found, checked against the HDF5 contract
(pipeline/encoding/hdf5_format.py), read.

    shards = find_shards(input_dir)        # Shards(train=[ShardInfo...], test=[...]); DataError
    shards.packed                          # rows of `encode --pack` (no sentence pairs)
    shards.doc_starts                      # ... that mark where their documents start
    arrays = read_shard(path, rows)        # {dataset: numpy array}
    read_shard(path, rows, optional=("doc_starts",))   # and those optional datasets the file has
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.encoding.hdf5_format import DATASETS, OPTIONAL_DATASETS, HDF5FormatError, check_file, is_packed
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
        return any(is_packed(s.path) for s in self.train)

    @property
    def doc_starts(self) -> bool:
        """Every file (training and test) marks where its rows' documents start."""
        return all(s.doc_starts for s in self.train + self.test)


def inspect_shard(path: str | Path) -> ShardInfo:
    """Check one file against the HDF5 contract (names, ranks, integer dtypes, shapes)."""
    path = Path(path)
    try:
        shape = check_file(path)
    except HDF5FormatError as exc:
        if is_os_fault(exc.__context__):   # unreadable: a failing disk, no permission
            raise DataError(os_error_message(exc.__context__, path, where="--input_dir")) from None
        raise DataError(f"{exc}; {_HINT}") from None
    return ShardInfo(path, shape.num_samples, shape.seq_len, shape.max_pred, _has(path, DOC_STARTS))


def _has(path: Path, dataset: str) -> bool:
    import h5py

    with h5py.File(path, "r") as fh:
        return dataset in fh


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
    train = [inspect_shard(p) for p in files if "training" in p.name]
    test = [inspect_shard(p) for p in files if is_test_file(p)]
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
            out[key] = arr if index is None else arr[index]
    return out
