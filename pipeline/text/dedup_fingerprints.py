"""dedup's first step, one file at a time: its documents' fingerprints on disk, as rows that the
bucket step sorts by key (pipeline/text/dedup_buckets.py) and signatures it reads by number.

For an input file the step writes, next to the path STEM it is given:
  STEM.sig.npy    uint32[documents, num_perm]: the MinHash signatures (read a row at a time)
  STEM.docs.npy   DOC_ROW a document: key = its signature's key, text = its normalised words' hash
  STEM.bands.npy  BAND_ROW a band of a document: key = the band's key, sig = the signature's key
  STEM.paras.npy  PARA_ROW a paragraph of --min-paragraph-chars or more: key = its words' hash
  STEM.meta.npz   start (each document's first paragraph, then the total), long (a paragraph
                  long enough to count), bounds[table] (where each of the SLICES key ranges
                  starts in that table)
Each table is sorted by key, stably (document order among equal keys), so that a bucket task
reads one contiguous range of rows of it; document and paragraph numbers are the file's own
(from 0): the stage adds the file's offset in keep order. Rows are read with plain reads, never
mapped, so that a process's resident memory is what it holds.

Usage:
    info = fingerprint_file((src, stem), num_perm=128, min_chars=40, bands=25, rows=5)
    read_rows(f"{stem}.bands.npy", lo, hi)           # rows lo..hi-1 of a table
    SignatureReader(sig_paths, doc_offsets).rows(global_doc_numbers)
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from common.atomic import atomic_path
from pipeline.text.documents import read_documents
from pipeline.text.near_dups import band_keys, normalised_words, signature, signature_keys, text_hash

DOC_ROW = np.dtype([("key", "<u8"), ("text", "<u8"), ("doc", "<u4")])
BAND_ROW = np.dtype([("key", "<u8"), ("sig", "<u8"), ("doc", "<u4"), ("band", "u1")])
PARA_ROW = np.dtype([("key", "<u8"), ("para", "<u4"), ("doc", "<u4")])
TABLES = {"docs": DOC_ROW, "bands": BAND_ROW, "paras": PARA_ROW}
SLICE_BITS = 10                  # the key space cut into 1,024 ranges: the bucket tasks' grain
SLICES = 1 << SLICE_BITS


def key_slice(keys: np.ndarray) -> np.ndarray:
    """The slice (0..SLICES-1) of each key: its top bits."""
    return (keys >> np.uint64(64 - SLICE_BITS)).astype(np.int64)


def table_path(stem: str | Path, table: str) -> Path:
    return Path(f"{stem}.{table}.npy")


def meta_path(stem: str | Path) -> Path:
    return Path(f"{stem}.meta.npz")


def sig_path(stem: str | Path) -> Path:
    return Path(f"{stem}.sig.npy")


def outputs(stem: str | Path) -> tuple[Path, ...]:
    return (sig_path(stem), *(table_path(stem, t) for t in TABLES), meta_path(stem))


def fingerprint_file(job: tuple[Path, str], num_perm: int, min_chars: int, bands: int, rows: int) -> dict:
    """Step 1 for one file (see the module docstring); returns its counts."""
    src, stem = job
    sigs, text_keys, para_keys, start = [], [], [], [0]
    for doc in read_documents(src):
        words_per_para = [normalised_words(p) for p in doc]
        words = [w for ws in words_per_para for w in ws]
        text_keys.append(text_hash(words))
        sigs.append(signature(words, num_perm))
        para_keys.extend(text_hash(ws) if sum(map(len, ws)) + len(ws) > min_chars else 0
                         for ws in words_per_para)
        start.append(len(para_keys))
    sig = np.asarray(sigs, dtype=np.uint32).reshape(len(sigs), num_perm)
    n, numbers = len(sig), np.arange(len(sig), dtype=np.uint32)
    docs = np.empty(n, DOC_ROW)
    docs["key"], docs["text"], docs["doc"] = signature_keys(sig), np.asarray(text_keys, np.uint64), numbers
    band = np.empty(n * bands, BAND_ROW)
    band["key"] = band_keys(sig, bands, rows).ravel()
    band["sig"], band["doc"] = np.repeat(docs["key"], bands), np.repeat(numbers, bands)
    band["band"] = np.tile(np.arange(bands, dtype=np.uint8), n)
    para_keys = np.asarray(para_keys, dtype=np.uint64)
    start = np.asarray(start, dtype=np.int64)
    long = np.flatnonzero(para_keys)
    paras = np.empty(len(long), PARA_ROW)
    paras["key"], paras["para"] = para_keys[long], long
    paras["doc"] = np.searchsorted(start, long, side="right") - 1
    tables = {"docs": docs, "bands": band, "paras": paras}
    bounds = {}
    for name, table in tables.items():
        table = tables[name] = table[np.argsort(table["key"], kind="stable")]
        bounds[name] = np.searchsorted(key_slice(table["key"]), np.arange(SLICES + 1))
        save_array(table_path(stem, name), table)
    save_array(sig_path(stem), sig)
    with atomic_path(meta_path(stem)) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, start=start, long=para_keys != 0, **{f"bounds_{k}": v for k, v in bounds.items()})
    return {"documents": n, "paragraphs": len(para_keys)}


def save_array(path: Path, array: np.ndarray) -> None:
    """`array` as an .npy file, written under a temporary name and renamed."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)


def _open_npy(fh) -> tuple[np.dtype, tuple]:
    """Read an .npy header: (dtype, shape); `fh` is left at the first row."""
    major, _minor = np.lib.format.read_magic(fh)
    read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
    shape, _fortran, dtype = read(fh)
    return dtype, shape


def read_rows(path: str | Path, lo: int, hi: int) -> np.ndarray:
    """Rows lo..hi-1 of the .npy file `path` (one read, no mapping)."""
    with open(path, "rb") as fh:
        dtype, shape = _open_npy(fh)
        width = int(np.prod(shape[1:], dtype=np.int64))
        fh.seek(lo * width * dtype.itemsize, os.SEEK_CUR)
        data = np.fromfile(fh, dtype=dtype, count=max(0, hi - lo) * width)
    return data.reshape((-1, *shape[1:]))


def row_count(path: str | Path) -> int:
    with open(path, "rb") as fh:
        return _open_npy(fh)[1][0]


class SignatureReader:
    """Signatures by global document number from every file's STEM.sig.npy (`offsets`: the global
    number of each file's first document, then the total)."""

    def __init__(self, sig_paths: list[Path], offsets: np.ndarray, num_perm: int):
        self.paths, self.offsets = sig_paths, np.asarray(offsets, dtype=np.int64)
        self.num_perm = num_perm

    def rows(self, docs: np.ndarray) -> np.ndarray:
        """uint32[len(docs), num_perm] in the order of `docs`."""
        docs = np.asarray(docs, dtype=np.int64)
        files = np.searchsorted(self.offsets, docs, side="right") - 1
        out = np.empty((len(docs), self.num_perm), dtype=np.uint32)
        width = self.num_perm * out.itemsize
        for f in np.unique(files):
            with open(self.paths[f], "rb") as fh:
                _open_npy(fh)
                base = fh.tell()
                for i in np.flatnonzero(files == f):
                    local = int(docs[i] - self.offsets[f])
                    out[i] = np.frombuffer(os.pread(fh.fileno(), width, base + local * width), dtype=np.uint32)
        return out
