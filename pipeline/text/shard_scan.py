"""`pipeline shard`'s first pass over one filtered file, a task of its own: each document's size,
whether its hash holds it out, and its training copies, written as arrays beside the run (the
plan and the writing pass read them a file at a time; 13 bytes a document on disk); and, in the
task's record, what the held-out choice needs: counts, the smallest hash, and the floor's
candidates, as many as the floor could take (never more than `floor` documents).

    info = scan_file(path, sidecar, seed=12345, test_fraction=0.01, candidate_fraction=0.2,
                     floor=2500, weights={"web": 2.0})
    sizes, test, copies = read_scan(sidecar)
"""
from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np

from common.atomic import atomic_open
from pipeline.core.sources import source_of
from pipeline.text.documents import copies_of, doc_hash, is_test, read_documents
from pipeline.text.documents import doc_bytes as _doc_bytes


def scan_file(path: Path, sidecar: Path | None, seed: int, test_fraction: float,
              candidate_fraction: float = 0.0, floor: int = 0, weights: dict | None = None) -> dict:
    """Pass 1 over one file: the arrays into `sidecar` (None: only the candidates, for a scan
    again with a larger `candidate_fraction`), and the file's record."""
    weight = (weights or {}).get(source_of(path.name), 1.0)
    sizes, test, copies = array("q"), bytearray(), array("i")
    candidates: list[tuple[int, int, int]] = []   # (hash, document, sentences), not held out by hash
    info = {"documents": 0, "sentences": 0, "test_documents": 0, "test_sentences": 0,
            "min_hash": None, "min_index": None}
    for i, doc in enumerate(read_documents(path)):
        data = _doc_bytes(doc)
        h = doc_hash(data, seed)
        held = is_test(h, test_fraction)
        sizes.append(len(data) + 2)   # with its newline and the blank line after it
        test.append(held)
        if weight != 1.0:
            copies.append(copies_of(data, seed, weight))
        if held:
            info["test_documents"] += 1
            info["test_sentences"] += len(doc)
        elif is_test(h, candidate_fraction):
            candidates.append((h, i, len(doc)))
        info["sentences"] += len(doc)
        if info["min_hash"] is None or h < info["min_hash"]:
            info["min_hash"], info["min_index"] = h, i
        info["documents"] = i + 1
    info["candidates"] = smallest_until(candidates, floor)
    if sidecar is not None:
        with atomic_open(sidecar, "wb") as fh:
            arrays = {"sizes": np.frombuffer(sizes, dtype=np.int64),
                      "test": np.frombuffer(bytes(test), dtype=bool)}
            if weight != 1.0:
                arrays["copies"] = np.frombuffer(copies, dtype=np.int32)
            np.savez(fh, **arrays)
    return info


def smallest_until(candidates: list, floor: int) -> list:
    """The candidates (hash, document, sentences) by hash, up to the first whose sentences bring
    the total to `floor`: all that a floor of `floor` sentences could ever take of them."""
    kept, sentences = [], 0
    for candidate in sorted(candidates):
        if sentences >= floor:
            break
        kept.append(candidate)
        sentences += candidate[2]
    return kept


def read_scan(sidecar: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A file's document sizes, hash-held-out flags and training copies (None: one each)."""
    with np.load(sidecar) as arrays:
        return arrays["sizes"], arrays["test"], arrays["copies"] if "copies" in arrays else None
