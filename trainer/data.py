"""Streaming the encode stage's HDF5 shards (NVIDIA's format, DESIGN.md) across ranks.

Order: for each epoch the training files are shuffled and each file's samples are permuted,
both from (seed, epoch) alone, giving one global sample sequence per epoch that does not
depend on the world size. That sequence is cut into `world_size` equal contiguous blocks (the
remainder, fewer than world_size samples, is dropped), so every rank sees the same number of
samples and no rank runs dry. Rank r walks its block file by file, reading only the files its
block touches; the next piece is loaded by a background thread while the current one is
consumed, so memory per rank is about two shards. Epochs follow one another seamlessly (a
micro-batch may straddle an epoch boundary), so the position is one number: samples consumed.
With a `masker` (--masking dynamic, trainer/masking.py) the rows get new masks after they are
loaded, keyed by (seed, epoch, global sample index): the same on any number of ranks. The
masking runs in a thread of its own while the next piece is read (three pieces in memory).

    data = ShardedTrainData(find_shards(input_dir).train, batch_size=32, seed=42,
                            rank=0, world_size=1)
    for batch in data:            # endless; dicts of int64 tensors (see `to_batch`)
        ...
    state = data.state_dict()     # saved in checkpoints; load_state_dict() resumes exactly
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from pipeline.encoding.hdf5_format import (DATASETS, OPTIONAL_DATASETS, HDF5FormatError, check_file,
                                          masked_lm_labels)
from trainer.masking import DynamicMasker, MaskingError
from trainer.oserrors import as_os_error, is_os_fault, os_error_message
from trainer.prefetch import BatchThread, Prefetcher

STATE_VERSION = 1
# what to do about a file that breaks the HDF5 contract (pipeline/encoding/hdf5_format.py)
_HINT = "make shards with `pipeline encode` (NVIDIA's HDF5 format, see DESIGN.md)"


class DataError(ValueError):
    """Unusable training data or loader state; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class ShardInfo:
    path: Path
    num_samples: int
    seq_len: int
    max_pred: int


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


def inspect_shard(path: str | Path) -> ShardInfo:
    """Check one file against the HDF5 contract (names, ranks, integer dtypes, shapes)."""
    path = Path(path)
    try:
        shape = check_file(path)
    except HDF5FormatError as exc:
        if is_os_fault(exc.__context__):   # unreadable: a failing disk, no permission
            raise DataError(os_error_message(exc.__context__, path, where="--input_dir")) from None
        raise DataError(f"{exc}; {_HINT}") from None
    return ShardInfo(path, shape.num_samples, shape.seq_len, shape.max_pred)


def find_shards(input_dir: str | Path) -> Shards:
    """All `*.hdf5` under `input_dir` (recursively): `*training*` files train, `*test*` evaluate."""
    root = Path(input_dir)
    if not root.is_dir():
        raise DataError(f"--input_dir {root} is not a directory: give the encode stage's "
                        "hdf5_... folder (or its {lang}wiki/ subfolder)")
    files = sorted(root.rglob("*.hdf5"), key=lambda p: p.relative_to(root).as_posix())
    train = [inspect_shard(p) for p in files if "training" in p.name]
    test = [inspect_shard(p) for p in files if "test" in p.name and "training" not in p.name]
    if not train:
        raise DataError(f"--input_dir {root} holds no *training*.hdf5 files: run `pipeline encode` "
                        "and point --input_dir at its hdf5_... folder")
    train = [s for s in train if s.num_samples > 0] or train
    shapes = {(s.seq_len, s.max_pred) for s in train + test}
    if len(shapes) > 1:
        raise DataError(f"--input_dir {root} mixes shards of different (seq_len, max_pred) "
                        f"{sorted(shapes)}: give one encode output folder (phase 1 or phase 2)")
    return Shards(train, test)


def read_shard(path: Path, index: np.ndarray | None = None,
               optional: bool = False) -> dict[str, np.ndarray]:
    """Whole datasets at once (each gzip chunk decompressed once), then `index` rows; with
    `optional`, also the contract's optional datasets the file has (word_starts)."""
    import h5py

    out = {}
    with h5py.File(path, "r") as fh:
        keys = list(DATASETS) + ([k for k in OPTIONAL_DATASETS if k in fh] if optional else [])
        for key in keys:
            arr = fh[key][()]
            out[key] = arr if index is None else arr[index]
    return out


def to_batch(arrays: dict[str, np.ndarray], pin_memory: bool = False):
    """numpy rows of a shard -> the trainer's batch: a dict of int64 tensors, in page-locked
    memory if `pin_memory` (CUDA only), so that `.to("cuda", non_blocking=True)` is a copy
    the host does not wait for."""
    import torch

    def t(a):
        tensor = torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64))
        return tensor.pin_memory() if pin_memory else tensor

    return {
        "input_ids": t(arrays["input_ids"]),
        "segment_ids": t(arrays["segment_ids"]),
        "input_mask": t(arrays["input_mask"]),
        "masked_lm_positions": t(arrays["masked_lm_positions"]),
        "masked_lm_labels": t(masked_lm_labels(arrays["masked_lm_positions"], arrays["masked_lm_ids"])),
        "next_sentence_labels": t(arrays["next_sentence_labels"]),
    }


@dataclass(frozen=True)
class Piece:
    """Rows [start, stop) of file `file` in that file's epoch permutation."""
    epoch: int
    file: int
    start: int
    stop: int


class EpochOrder:
    """The (seed, epoch) -> sample order function, and each rank's block of it."""

    def __init__(self, sizes: Sequence[int], seed: int, world_size: int):
        self.sizes = list(sizes)
        self.seed = int(seed)
        self.world_size = int(world_size)
        self.total = sum(self.sizes)
        self.per_rank = self.total // self.world_size
        if self.per_rank == 0:
            raise DataError(f"{self.total} training samples cannot feed {self.world_size} ranks: "
                            "encode more data or use fewer ranks")

    def file_order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch, 1]).permutation(len(self.sizes))

    def sample_order(self, epoch: int, file: int) -> np.ndarray:
        # Keyed by the file's index in the sorted list, not by its position this epoch.
        return np.random.default_rng([self.seed, epoch, 2, file]).permutation(self.sizes[file])

    def pieces(self, rank: int, epoch: int) -> list[Piece]:
        lo, hi = rank * self.per_rank, (rank + 1) * self.per_rank
        out, base = [], 0
        for f in self.file_order(epoch):
            f = int(f)
            a, b = max(lo, base), min(hi, base + self.sizes[f])
            if a < b:
                out.append(Piece(epoch, f, a - base, b - base))
            base += self.sizes[f]
        return out


class ShardedTrainData:
    """Endless micro-batches of this rank's block of each epoch; see the module docstring.

    Batches are assembled (and pinned, with `pin_memory`) in a background thread, `depth`
    ahead; `extras(batch)` adds model-specific host-side entries there too (the trainer's
    --unpad: where the real tokens are)."""

    def __init__(self, shards: Sequence[ShardInfo], batch_size: int, seed: int, rank: int,
                 world_size: int, vocab_size: int | None = None, pin_memory: bool = False,
                 extras: Callable[[dict], dict] | None = None, depth: int = 4,
                 masker: DynamicMasker | None = None):
        if batch_size < 1:
            raise DataError(f"batch size must be >= 1, got {batch_size}")
        self.shards = list(shards)
        self.batch_size = int(batch_size)
        self.rank, self.world_size = int(rank), int(world_size)
        self.vocab_size = vocab_size
        self.pin_memory = pin_memory  # batches in page-locked memory (for a CUDA device)
        self.order = EpochOrder([s.num_samples for s in self.shards], seed, world_size)
        self.extras = extras
        self.depth = int(depth)
        self.masker = masker  # None: the static masks of the files (NVIDIA's recipe)
        # a sample's global index (its file's offset + its row): dynamic masks are keyed by it
        self.offsets = np.concatenate([[0], np.cumsum(self.order.sizes)[:-1]]).astype(np.int64)
        self.samples_consumed = 0  # by this rank, over all epochs (batches handed out)
        self._batches: BatchThread | None = None

    # -- position ------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self.samples_consumed // self.order.per_rank

    def state_dict(self) -> dict:
        return {"version": STATE_VERSION, "seed": self.order.seed, "world_size": self.world_size,
                "epoch": self.epoch, "samples_consumed": self.samples_consumed,
                "samples_per_rank_per_epoch": self.order.per_rank,
                "num_files": len(self.shards), "num_samples": self.order.total,
                "masking": self.masking_settings()}

    def masking_settings(self) -> dict:
        return self.masker.settings() if self.masker is not None else {"masking": "static"}

    def load_state_dict(self, state: dict) -> None:
        """Resume at a saved position; refuse when the order cannot be kept."""
        if state.get("version") != STATE_VERSION:
            raise DataError(f"loader state version {state.get('version')} is not {STATE_VERSION}: "
                            "this checkpoint was written by another trainer version")
        if (state["num_files"], state["num_samples"], state["seed"]) != (
                len(self.shards), self.order.total, self.order.seed):
            raise DataError(
                f"the training data or seed changed since the checkpoint ({state['num_files']} files, "
                f"{state['num_samples']} samples, seed {state['seed']} then; {len(self.shards)} files, "
                f"{self.order.total} samples, seed {self.order.seed} now): resume with the same "
                "--input_dir and --seed, or start a new --output_dir")
        saved = state.get("masking", {"masking": "static"})  # checkpoints before dynamic masking
        if saved != self.masking_settings():
            raise DataError(f"the masking changed since the checkpoint ({saved} then, "
                            f"{self.masking_settings()} now): resume with the same --masking, "
                            "--mlm_probability and --whole_word_masking, or start a new --output_dir")
        consumed, per_rank = state["samples_consumed"], state["samples_per_rank_per_epoch"]
        if state["world_size"] != self.world_size:
            if consumed % per_rank:
                raise DataError(
                    f"the checkpoint was written by {state['world_size']} ranks in the middle of epoch "
                    f"{consumed // per_rank} and this run has {self.world_size}: the sample order "
                    f"cannot be kept; resume with {state['world_size']} ranks (e.g. torchrun "
                    f"--nproc_per_node={state['world_size']})")
            # At an epoch boundary the next epoch's order does not depend on the world size.
            consumed = consumed // per_rank * self.order.per_rank
        self.close()
        self.samples_consumed = consumed

    # -- reading -------------------------------------------------------------------------
    def _pieces_from(self, consumed: int) -> Iterator[Piece]:
        epoch, skip = divmod(consumed, self.order.per_rank)
        while True:
            for p in self.order.pieces(self.rank, epoch):
                n = p.stop - p.start
                if skip >= n:
                    skip -= n
                    continue
                yield Piece(p.epoch, p.file, p.start + skip, p.stop)
                skip = 0
            epoch += 1

    def _load(self, piece: Piece) -> dict[str, np.ndarray]:
        info = self.shards[piece.file]
        rows = self.order.sample_order(piece.epoch, piece.file)[piece.start:piece.stop]
        try:
            arrays = read_shard(info.path, rows,
                                optional=self.masker is not None and self.masker.whole_word)
        except OSError as exc:   # h5py names no file: run_pretraining's one line needs it
            raise as_os_error(exc, info.path) from None
        if self.vocab_size is not None and arrays["input_ids"].size:
            top = int(arrays["input_ids"].max())
            if top >= self.vocab_size:
                raise DataError(f"{info.path}: token id {top} >= the model's vocab_size "
                                f"{self.vocab_size}: use the bert_config whose vocab_size matches "
                                "the vocab.txt the data was encoded with")
        return arrays

    def _mask(self, piece: Piece, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """New masks for a loaded piece (in the prefetcher's second thread)."""
        rows = self.order.sample_order(piece.epoch, piece.file)[piece.start:piece.stop]
        try:
            return self.masker.apply(arrays, piece.epoch, self.offsets[piece.file] + rows,
                                     self.shards[piece.file].path)
        except MaskingError as exc:
            raise DataError(str(exc)) from None

    def _assemble(self, consumed: int) -> Iterator[dict]:
        """The batches from position `consumed` on (runs in the batch thread)."""
        prefetch = Prefetcher(self._load, self._pieces_from(consumed),
                              finish=self._mask if self.masker is not None else None)
        try:
            cur, off = None, 0
            while True:
                parts, need = [], self.batch_size
                while need:
                    if cur is None or off == len(cur["input_ids"]):
                        # Drop the used-up piece before the following one starts loading (copy
                        # this batch's rows out of it): two pieces in memory, not three.
                        parts = [{k: v.copy() for k, v in part.items()} for part in parts]
                        cur = None
                        _, cur = prefetch.next()
                        off = 0
                    take = min(need, len(cur["input_ids"]) - off)
                    parts.append({k: v[off:off + take] for k, v in cur.items()})
                    off += take
                    need -= take
                rows = parts[0] if len(parts) == 1 else {
                    k: np.concatenate([p[k] for p in parts]) for k in DATASETS}
                batch = to_batch(rows, self.pin_memory)
                if self.extras is not None:
                    batch.update(self.extras(batch))
                yield batch
        finally:
            prefetch.close()

    def __iter__(self) -> Iterator[dict]:
        self.close()
        self._batches = BatchThread(self._assemble(self.samples_consumed), self.depth)
        while True:
            batch = self._batches.next()
            self.samples_consumed += self.batch_size
            yield batch

    def close(self) -> None:
        if getattr(self, "_batches", None) is not None:
            self._batches.close()
            self._batches = None

    def __del__(self):
        self.close()


def eval_batches(shards: Sequence[ShardInfo], batch_size: int, rank: int, world_size: int,
                 max_samples: int | None = None) -> Iterator[dict]:
    """This rank's share of the held-out samples (the first `max_samples`, in file order)."""
    budget = sum(s.num_samples for s in shards)
    if max_samples is not None:
        budget = min(budget, max_samples)
    lo, hi = budget * rank // world_size, budget * (rank + 1) // world_size
    base = 0
    for info in shards:
        a, b = max(lo, base), min(hi, base + info.num_samples)
        if a < b:
            arrays = read_shard(info.path, np.arange(a - base, b - base))
            for i in range(0, b - a, batch_size):
                yield to_batch({k: v[i:i + batch_size] for k, v in arrays.items()})
        base += info.num_samples
