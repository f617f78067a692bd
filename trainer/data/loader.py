"""Streaming the encode stage's HDF5 shards (NVIDIA's format, docs/hdf5_format.md) across ranks.

Rank r walks its block of each epoch's sample order (trainer/data/order.py) file by file,
reading only the files its block touches; the next piece is loaded by a background thread while
the current one is consumed, so memory per rank is about two shards. Epochs follow one another
seamlessly (a micro-batch may straddle an epoch boundary), so the position is one number:
samples consumed. With a `masker` (--masking dynamic, trainer/data/masking.py) the rows get new
masks after they are loaded, keyed by (seed, epoch, global sample index): the same on any number
of ranks. The masking runs in a thread of its own while the next piece is read (three pieces in
memory). With `unpad` each batch also carries its layout, found on the host
(trainer/data/unpadding.py), for training, evaluation and the budget's timing alike: where its
real tokens are and, with `doc_attention="within"`, where each document of a packed row starts
(the rows' doc_starts, read from the files, also in the batch). The loader's state records
`doc_attention`, so a resume cannot change it.

    data = ShardedTrainData(find_shards(input_dir).train, batch_size=32, seed=42,
                            rank=0, world_size=1)
    for batch in data:            # endless; dicts of int64 tensors (see `to_batch`)
        ...
    state = data.state_dict()     # saved in checkpoints; load_state_dict() resumes exactly
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from pipeline.encoding.hdf5_format import DATASETS, masked_lm_labels
from trainer.data.masking import DynamicMasker, MaskingError
from trainer.data.order import EpochOrder, Piece
from trainer.data.prefetch import PrefetchedBatches, Prefetcher
from trainer.data.shards import DOC_STARTS, DataError, ShardInfo, read_shard
from common.os_errors import as_os_error
from trainer.data.unpadding import host_unpadded

STATE_VERSION = 1


def to_batch(arrays: dict[str, np.ndarray], pin_memory: bool = False, unpad: bool = False,
             within: bool = False):
    """numpy rows of a shard -> the trainer's batch: a dict of int64 tensors (with "doc_starts"
    when the rows have it), in page-locked memory if `pin_memory` (CUDA only), so that
    `.to("cuda", non_blocking=True)` is a copy the host does not wait for; with `unpad` also
    "unpadded", the batch's layout (trainer/data/unpadding.py): where the real tokens are and,
    `within` documents, a segment a document (else a row)."""
    import torch

    def t(a):
        tensor = torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64))
        return tensor.pin_memory() if pin_memory else tensor

    batch = {
        "input_ids": t(arrays["input_ids"]),
        "segment_ids": t(arrays["segment_ids"]),
        "input_mask": t(arrays["input_mask"]),
        "masked_lm_positions": t(arrays["masked_lm_positions"]),
        "masked_lm_labels": t(masked_lm_labels(arrays["masked_lm_positions"], arrays["masked_lm_ids"])),
        "next_sentence_labels": t(arrays["next_sentence_labels"]),
    }
    if DOC_STARTS in arrays:
        batch[DOC_STARTS] = t(arrays[DOC_STARTS])
    if unpad:
        batch["unpadded"] = host_unpadded(batch["input_mask"], batch[DOC_STARTS] if within else None,
                                          pin_memory)
    return batch


def stack_rows(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Rows of several pieces as one: the contract's datasets, and doc_starts when every piece
    has it (word_starts has served the masking by now)."""
    if len(parts) == 1:
        return parts[0]
    keys = list(DATASETS) + ([DOC_STARTS] if all(DOC_STARTS in p for p in parts) else [])
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


class ShardedTrainData(PrefetchedBatches):
    """Endless micro-batches of this rank's block of each epoch; see the module docstring.

    Batches are assembled (and pinned, with `pin_memory`; with `unpad`, where the real tokens
    are) in a background thread, `depth` ahead."""

    def __init__(self, shards: Sequence[ShardInfo], batch_size: int, seed: int, rank: int,
                 world_size: int, vocab_size: int | None = None, pin_memory: bool = False,
                 unpad: bool = False, depth: int = 4, masker: DynamicMasker | None = None,
                 order_key: int | None = None, index_base: int = 0, doc_attention: str | None = None):
        if batch_size < 1:
            raise DataError(f"batch size must be >= 1, got {batch_size}")
        self.shards = list(shards)
        self.batch_size = int(batch_size)
        self.rank, self.world_size = int(rank), int(world_size)
        self.vocab_size = vocab_size
        self.pin_memory = pin_memory  # batches in page-locked memory (for a CUDA device)
        self.order = EpochOrder([s.num_samples for s in self.shards], seed, world_size, order_key)
        self.unpad = unpad
        # "within": the batches' layout has a segment a document (the rows' doc_starts); "across"
        # (packed rows) or None (sentence pairs): a row; saved with the position, for the resume
        self.doc_attention = doc_attention
        self.depth = int(depth)
        self.masker = masker  # None: the static masks of the files (NVIDIA's recipe)
        # a sample's global index (its file's offset + its row; + index_base, the language's first
        # index with several languages): dynamic masks are keyed by it
        self.offsets = np.concatenate([[0], np.cumsum(self.order.sizes)[:-1]]).astype(np.int64) + index_base
        self.samples_consumed = 0  # by this rank, over all epochs (batches handed out)

    # -- position ------------------------------------------------------------------------
    @property
    def epoch(self) -> int:
        return self.samples_consumed // self.order.per_rank

    @property
    def num_samples(self) -> int:
        """Training samples in the files (all ranks)."""
        return self.order.total

    def state_dict(self) -> dict:
        return {"version": STATE_VERSION, "seed": self.order.seed, "world_size": self.world_size,
                "epoch": self.epoch, "samples_consumed": self.samples_consumed,
                "samples_per_rank_per_epoch": self.order.per_rank,
                "num_files": len(self.shards), "num_samples": self.order.total,
                "masking": self.masking_settings(), "doc_attention": self.doc_attention}

    def masking_settings(self) -> dict:
        return self.masker.settings() if self.masker is not None else {"masking": "static"}

    def load_state_dict(self, state: dict) -> None:
        """Resume at a saved position; refuse when the order cannot be kept."""
        if "languages" in state:   # trainer/data/mixture.py's state
            raise DataError(f"the checkpoint was trained on several languages "
                            f"({', '.join(lang[0] for lang in state['languages'])}): resume with the "
                            "same --input_dir LANG=DIR folders, or start a new --output_dir")
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
        check_doc_attention(state, self.doc_attention)
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
            arrays = read_shard(info.path, rows, optional=self.optional_datasets())
        except OSError as exc:   # h5py names no file: run_pretraining's one line needs it
            raise as_os_error(exc, info.path) from None
        if self.vocab_size is not None and arrays["input_ids"].size:
            top = int(arrays["input_ids"].max())
            if top >= self.vocab_size:
                raise DataError(f"{info.path}: token id {top} >= the model's vocab_size "
                                f"{self.vocab_size}: use the --model_config whose vocab_size matches "
                                "the vocab.txt the data was encoded with")
        return arrays

    def optional_datasets(self) -> tuple[str, ...]:
        """What the rows need beyond the contract's datasets: the words for whole-word masking,
        where documents start for attention within them."""
        return ((("word_starts",) if self.masker is not None and self.masker.whole_word else ())
                + ((DOC_STARTS,) if self.doc_attention == "within" else ()))

    def _mask(self, piece: Piece, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """New masks for a loaded piece (in the prefetcher's second thread)."""
        rows = self.order.sample_order(piece.epoch, piece.file)[piece.start:piece.stop]
        try:
            return self.masker.apply(arrays, piece.epoch, self.offsets[piece.file] + rows,
                                     self.shards[piece.file].path)
        except MaskingError as exc:
            raise DataError(str(exc)) from None

    def piece_stream(self, consumed: int) -> Prefetcher:
        """This rank's pieces from position `consumed` on, read (and masked) in background
        threads, one ahead: `.next()` -> (piece, arrays); `.close()`."""
        return Prefetcher(self._load, self._pieces_from(consumed),
                          finish=self._mask if self.masker is not None else None)

    def _assemble(self, consumed: int) -> Iterator[dict]:
        """The batches from position `consumed` on (runs in the batch thread)."""
        prefetch = self.piece_stream(consumed)
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
                yield to_batch(stack_rows(parts), self.pin_memory, self.unpad,
                               self.doc_attention == "within")
        finally:
            prefetch.close()



def eval_batches(shards: Sequence[ShardInfo], batch_size: int, rank: int, world_size: int,
                 max_samples: int | None = None, unpad: bool = False,
                 within: bool = False) -> Iterator[dict]:
    """This rank's share of the held-out samples (the first `max_samples`, in file order),
    batched as the training loader does (`unpad`: with the layout, `within` documents)."""
    for arrays in heldout_rows(shards, rank, world_size, max_samples, (DOC_STARTS,) if within else False):
        for i in range(0, len(arrays["input_ids"]), batch_size):
            yield to_batch({k: v[i:i + batch_size] for k, v in arrays.items()}, unpad=unpad,
                           within=within)


def heldout_rows(shards: Sequence[ShardInfo], rank: int, world_size: int, max_samples: int | None = None,
                 optional=False) -> Iterator[dict[str, np.ndarray]]:
    """This rank's share of the first `max_samples` held-out rows (in file order), a file's
    part at a time (read_shard's arrays, with the `optional` datasets asked for)."""
    budget = sum(s.num_samples for s in shards)
    if max_samples is not None:
        budget = min(budget, max_samples)
    lo, hi = budget * rank // world_size, budget * (rank + 1) // world_size
    base = 0
    for info in shards:
        a, b = max(lo, base), min(hi, base + info.num_samples)
        if a < b:
            yield read_shard(info.path, np.arange(a - base, b - base), optional=optional)
        base += info.num_samples


def check_doc_attention(state: dict, now: str | None) -> None:
    """Refuse a resume whose attention differs from the checkpoint's: `now` and the state's
    "doc_attention" are "within", "across" or None (rows of sentence pairs). A checkpoint written
    before the choice existed attended across documents."""
    then = state.get("doc_attention", "across" if now == "within" else now)
    if then != now:
        def said(x):
            return f"--doc_attention {x}" if x else "sentence pairs"
        fix = f"--doc_attention {then}" if then else "the checkpoint's --input_dir"
        raise DataError(f"the attention changed since the checkpoint ({said(then)} then, {said(now)} "
                        f"now): resume with {fix}, or start a new --output_dir")
