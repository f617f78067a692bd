"""Write BERT instances to one HDF5 file in NVIDIA's layout, a batch at a time.

Usage:
    with InstanceFileWriter(tmp_path, n_instances, max_seq=128, max_pred=20) as out:
        for batch in batches:          # dicts of arrays from pipeline/encoding/masking.py
            out.write(batch)
    InstanceFileWriter(..., attrs={PACKED_ATTR: 1})   # root attributes (encode --pack)

The datasets are those of the contract (pipeline/encoding/hdf5_format.py). They are
gzip-compressed (level 1 with the byte-shuffle filter: smaller than the reference's
gzip-4 files) and carry no timestamps, so the same instances give byte-identical files.

Whole chunks are filtered here and handed to HDF5 with write_direct_chunk: the byte shuffle in
numpy and the deflate stream from ISA-L (`isal`, about 5x faster than zlib at level 1, the same
zlib format HDF5's gzip filter reads): through h5py's own filters this was a quarter of the
stage's time. Without `isal` the stdlib zlib compresses the chunks. Chunks under 4 KiB
(next_sentence_labels, the chunks of tiny files) always go through zlib: on such small inputs
ISA-L's choice between a fixed and a dynamic Huffman block depends on the process's memory
layout (in about 1 of 60 processes it emits another, equally valid, stream; never with address
randomisation off), which broke byte-identical outputs; zlib's choice is a function of the
bytes. They are a tiny share of the data, so encode keeps ISA-L's speed. The file's last chunk is
padded with zeros as HDF5 pads edge chunks; a write that does not start on a chunk boundary,
or leaves a chunk unfinished before the end, goes through h5py's own filters instead.
"""
from __future__ import annotations

import zlib

import numpy as np

try:
    from isal.isal_zlib import compress as _isal_deflate
except ImportError:   # the same format, slower
    _isal_deflate = None

from .hdf5_format import DATASETS, OPTIONAL_DATASETS

GZIP_LEVEL = 1
SHUFFLE = True
CHUNK_BYTES = 1 << 18   # rows per HDF5 chunk: about 256 KB of input_ids
ZLIB_BELOW = 4096       # chunks smaller than this are deflated by zlib (see the module docstring)
BATCH_TOKENS = 1 << 16  # rows per batch x max_seq (batch_rows)


def chunk_rows(max_seq: int) -> int:
    """Rows per HDF5 chunk; batches are written in multiples of it (no partial chunks)."""
    return max(1, CHUNK_BYTES // (4 * max_seq))


def batch_rows(max_seq: int) -> int:
    """Rows per batch that encode makes and writes at once: whole chunks (the fast path above),
    about BATCH_TOKENS tokens, which bounds the batch's working memory."""
    rows = chunk_rows(max_seq)
    return max(rows, (BATCH_TOKENS // max_seq) // rows * rows)


class InstanceFileWriter:
    def __init__(self, path, n_instances: int, max_seq: int, max_pred: int,
                 gzip_level: int = GZIP_LEVEL, shuffle: bool = SHUFFLE, optional: tuple = (),
                 attrs: dict | None = None):
        """`optional`: keys of OPTIONAL_DATASETS to write too (each batch then holds them);
        `attrs`: root attributes of the contract (none for sentence pairs: their files stay
        byte for byte what they were)."""
        import h5py

        self.n = n_instances
        self.written = 0
        # whole chunks are written at once: no chunk cache needed (it would cost ~1 MB a dataset)
        self.file = h5py.File(path, "w", rdcc_nbytes=0)
        for key, value in (attrs or {}).items():
            self.file.attrs[key] = value
        self.rows = rows = max(1, min(chunk_rows(max_seq), n_instances))
        self.level = gzip_level
        # ISA-L knows levels 0 to 3 (its 1 compresses about like zlib's 1)
        self._fast_deflate = _isal_deflate if _isal_deflate and gzip_level <= 3 else zlib.compress
        self.shuffle = shuffle
        self.datasets = {}
        keys = {**DATASETS, **{k: OPTIONAL_DATASETS[k] for k in optional}}
        for key, (dtype, width) in keys.items():
            shape = (n_instances,) if width is None else (n_instances, max_seq if width == "L" else max_pred)
            chunks = (rows,) + shape[1:]
            self.datasets[key] = self.file.create_dataset(
                key, shape=shape, dtype=dtype, chunks=chunks if n_instances else None,
                compression="gzip" if n_instances else None,
                compression_opts=gzip_level if n_instances else None,
                shuffle=shuffle and n_instances > 0 and np.dtype(dtype).itemsize > 1,
                track_times=False)

    def write(self, batch: dict[str, np.ndarray]) -> None:
        n = len(batch["next_sentence_labels"])
        end = self.written + n
        assert end <= self.n, "more instances than planned"
        rows = self.rows
        for key, ds in self.datasets.items():
            data = batch[key]
            if self.written % rows:          # not chunk-aligned: let h5py do it
                ds[self.written:end] = data
                continue
            data = np.ascontiguousarray(data, dtype=ds.dtype)
            shuffle = self.shuffle and data.itemsize > 1
            for lo in range(0, n, rows):
                chunk = data[lo:lo + rows]
                if len(chunk) < rows:
                    if self.written + lo + len(chunk) < self.n:   # a gap HDF5 would not fill
                        ds[self.written + lo:self.written + lo + len(chunk)] = chunk
                        continue
                    pad = np.zeros((rows,) + chunk.shape[1:], dtype=chunk.dtype)
                    pad[:len(chunk)] = chunk     # the edge chunk is stored whole, as HDF5 does
                    chunk = pad
                raw = chunk.view(np.uint8).reshape(-1, data.itemsize).T if shuffle else chunk
                offset = (self.written + lo,) + (0,) * (data.ndim - 1)
                ds.id.write_direct_chunk(offset, self._deflate(np.ascontiguousarray(raw)))
        self.written = end

    def _deflate(self, raw: np.ndarray) -> bytes:
        deflate = zlib.compress if raw.nbytes < ZLIB_BELOW else self._fast_deflate
        return deflate(raw, self.level)

    def close(self) -> None:
        self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        if exc_type is None:
            assert self.written == self.n, f"wrote {self.written} of {self.n} instances"
