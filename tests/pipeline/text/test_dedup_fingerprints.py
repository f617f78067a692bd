"""dedup's first step: band keys that are equal exactly when MinHashLSH's bands are, and one
file's fingerprints on disk (signatures read back by number, key-sorted tables whose slice
bounds a bucket task reads)."""
from __future__ import annotations

import numpy as np
from datasketch import MinHashLSH

from pipeline.text.dedup_fingerprints import (
    SLICES,
    TABLES,
    SignatureReader,
    fingerprint_file,
    key_slice,
    meta_path,
    read_rows,
    row_count,
    sig_path,
    table_path,
)
from pipeline.text.documents import format_documents
from pipeline.text.near_dups import band_keys, lsh_bands, normalised_words, signature, signature_keys


def test_bands_are_minhashlsh_s_and_their_keys_are_equal_when_the_bands_are():
    for threshold in (0.3, 0.5, 0.8):
        lsh = MinHashLSH(threshold=threshold, num_perm=128)
        assert lsh_bands(threshold) == (lsh.b, lsh.r)
    rnd = np.random.default_rng(0)
    sigs = rnd.integers(0, 2 ** 32, (200, 128), dtype=np.uint32)
    sigs[1::2, :40] = sigs[0::2, :40]          # every other signature shares its first 8 bands
    keys = band_keys(sigs, 25, 5)
    same = keys[0::2] == keys[1::2]
    assert same[:, :8].all() and not same[:, 8:].any()
    assert len(np.unique(keys)) == 200 * 25 - 100 * 8    # no two other bands (or band numbers) meet
    assert (signature_keys(sigs[:1]) == signature_keys(sigs[:1].copy())).all()
    assert signature_keys(sigs[:2])[0] != signature_keys(sigs[:2])[1]


def test_one_file_s_fingerprints(tmp_path):
    long, short = "Ез ёзҳ бир ҷумлаи дароз аст, ки аз чил ҳарф зиёд дорад.", "Қисми кӯтоҳ"
    docs = [[long, short], [short], ["Другий документ із довгим абзацом, що має понад сорок літер."], [long]]
    src = tmp_path / "a.txt"
    src.write_text(format_documents(docs), encoding="utf-8")
    info = fingerprint_file((src, str(tmp_path / "a")), num_perm=64, min_chars=40, bands=8, rows=8)
    assert info == {"documents": 4, "paragraphs": 5}
    meta = np.load(meta_path(tmp_path / "a"))
    assert meta["start"].tolist() == [0, 2, 3, 4, 5] and meta["long"].tolist() == [True, False, False, True, True]
    for name in TABLES:
        rows = read_rows(table_path(tmp_path / "a", name), 0, row_count(table_path(tmp_path / "a", name)))
        assert (np.diff(rows["key"].astype(np.float64)) >= 0).all()   # sorted by key
        bounds = meta[f"bounds_{name}"]
        assert len(bounds) == SLICES + 1 and bounds[-1] == len(rows)
        assert (key_slice(rows["key"]) == np.searchsorted(bounds, np.arange(len(rows)), side="right") - 1).all()
    paras = read_rows(table_path(tmp_path / "a", "paras"), 0, 3)
    assert sorted(zip(paras["doc"].tolist(), paras["para"].tolist())) == [(0, 0), (2, 3), (3, 4)]
    assert len(set(paras["key"].tolist())) == 2                         # doc 0's long paragraph is doc 3's
    assert read_rows(table_path(tmp_path / "a", "bands"), 0, 40)["band"].max() == 7
    reader = SignatureReader([sig_path(tmp_path / "a")], np.array([10, 14]), 64)   # the file's first is 10
    want = [signature([w for p in docs[d] for w in normalised_words(p)], 64) for d in (3, 0)]
    assert np.array_equal(reader.rows(np.array([13, 10])), np.array(want))
