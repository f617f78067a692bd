"""The HDF5 writer: chunks compressed by the writer itself (shuffle + deflate, handed to HDF5
whole) read back unchanged through h5py's own gzip and shuffle filters, the edge chunk too."""
import h5py
import numpy as np
import pytest

import pipeline.encoding.writer as hdf5_writer
from pipeline.encoding.hdf5_format import DATASETS
from pipeline.encoding.writer import InstanceFileWriter, chunk_rows


def batch(rng, n, L, P, start):
    return {
        "input_ids": rng.integers(0, 30000, size=(n, L), dtype=np.int32),
        "input_mask": (rng.random((n, L)) < 0.7).astype(np.int8),
        "segment_ids": (rng.random((n, L)) < 0.5).astype(np.int8),
        "masked_lm_positions": np.sort(rng.integers(0, L, size=(n, P)), axis=1).astype(np.int32),
        "masked_lm_ids": rng.integers(0, 30000, size=(n, P), dtype=np.int32),
        "next_sentence_labels": (np.arange(start, start + n) % 3 == 0).astype(np.int8),
    }


def write(path, sizes, L=64, P=10, seed=0):
    rng = np.random.default_rng(seed)
    parts, start = [], 0
    with InstanceFileWriter(path, sum(sizes), L, P) as out:
        for n in sizes:
            parts.append(batch(rng, n, L, P, start))
            out.write(parts[-1])
            start += n
    return {k: np.concatenate([p[k] for p in parts]) for k in DATASETS}


@pytest.mark.parametrize("isal", [True, False])
def test_chunks_read_back_through_hdf5s_filters(tmp_path, monkeypatch, isal):
    if not isal:     # without the isal package: the stdlib's zlib
        monkeypatch.setattr(hdf5_writer, "_isal_deflate", None)
    rows = chunk_rows(64)
    # whole chunks, then a partial chunk in the middle (h5py writes it), an unaligned batch and
    # the partial edge chunk at the end
    sizes = [2 * rows, rows // 2, rows + 3, rows - 5]
    want = write(tmp_path / "a.hdf5", sizes)
    with h5py.File(tmp_path / "a.hdf5", "r") as f:
        for key, (dtype, _) in DATASETS.items():
            ds = f[key]
            assert ds.dtype == dtype and ds.compression == "gzip" and ds.compression_opts == 1
            assert ds.shuffle == (np.dtype(dtype).itemsize > 1)
            assert ds.chunks[0] == rows
            assert np.array_equal(ds[:], want[key]), key


def test_same_instances_same_bytes_and_smaller_than_raw(tmp_path):
    rows = chunk_rows(64)
    write(tmp_path / "a.hdf5", [rows, rows, 7])
    write(tmp_path / "b.hdf5", [rows, rows, 7])
    assert (tmp_path / "a.hdf5").read_bytes() == (tmp_path / "b.hdf5").read_bytes()
    with h5py.File(tmp_path / "a.hdf5", "r") as f:
        ds = f["input_mask"]
        assert ds.id.get_storage_size() < ds.size      # compressed for real


def test_empty_file_has_the_layout(tmp_path):
    with InstanceFileWriter(tmp_path / "e.hdf5", 0, 128, 20):
        pass
    with h5py.File(tmp_path / "e.hdf5", "r") as f:
        assert f["input_ids"].shape == (0, 128) and f["next_sentence_labels"].shape == (0,)
