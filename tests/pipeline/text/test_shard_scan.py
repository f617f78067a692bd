"""pipeline/text/shard_scan.py: pass 1's arrays per file and its record, whose floor candidates
are bounded by the floor, not by the documents."""
from __future__ import annotations

import numpy as np

from pipeline.text.documents import doc_hash, is_test
from pipeline.text.shard_scan import read_scan, scan_file, smallest_until


def write_docs(path, docs):
    path.write_text("\n\n".join("\n".join(d) for d in docs) + "\n", encoding="utf-8")


def test_the_arrays_and_the_record_of_a_file(tmp_path):
    docs = [[f"Mondat {i}.", "Második mondat, hosszabb." * (i % 4 + 1)] if i % 3 else [f"Egy {i}."] for i in range(300)]
    write_docs(tmp_path / "web__a.txt", docs)
    info = scan_file(tmp_path / "web__a.txt", tmp_path / "a.npz", seed=3, test_fraction=0.1,
                     candidate_fraction=0.5, floor=40, weights={"web": 2.5})
    sizes, test, copies = read_scan(tmp_path / "a.npz")
    data = ["\n".join(d).encode() for d in docs]
    assert sizes.tolist() == [len(b) + 2 for b in data]
    hashes = [doc_hash(b, 3) for b in data]
    assert test.tolist() == [is_test(h, 0.1) for h in hashes]
    assert set(copies.tolist()) == {2, 3}
    assert info["documents"] == 300 and info["sentences"] == sum(len(d) for d in docs)
    assert info["test_documents"] == sum(test) and info["test_sentences"] == sum(
        len(d) for d, t in zip(docs, test) if t)
    assert info["min_hash"] == min(hashes) and hashes[info["min_index"]] == min(hashes)
    # candidates: not held out by hash, below the candidate share, smallest hash first, until 40 sentences
    cands = info["candidates"]
    assert [c[0] for c in cands] == sorted(c[0] for c in cands)
    assert all(not is_test(h, 0.1) and is_test(h, 0.5) and hashes[i] == h for h, i, _n in cands)
    assert sum(n for *_, n in cands[:-1]) < 40 <= sum(n for *_, n in cands)
    # without a sidecar (a scan again for candidates): the same record, no file
    again = scan_file(tmp_path / "web__a.txt", None, seed=3, test_fraction=0.1, candidate_fraction=0.5, floor=40)
    assert again == info and len(list(tmp_path.glob("*.npz"))) == 1
    none = scan_file(tmp_path / "web__a.txt", tmp_path / "b.npz", seed=3, test_fraction=0.1)
    assert none["candidates"] == [] and read_scan(tmp_path / "b.npz")[2] is None


def test_smallest_until_keeps_what_a_floor_could_take():
    cands = [(9, 0, 5), (1, 1, 2), (4, 2, 3), (7, 3, 1)]
    assert smallest_until(cands, 5) == [(1, 1, 2), (4, 2, 3)]
    assert smallest_until(cands, 6) == [(1, 1, 2), (4, 2, 3), (7, 3, 1)]
    assert smallest_until(cands, 0) == [] and len(smallest_until(cands, 100)) == 4
    assert np.all(np.diff([c[0] for c in smallest_until(cands, 100)]) > 0)
