"""dedup's second step: the fingerprints of every file cut by key into buckets, each bucket
sorted and scanned alone, in parallel, for what may be a copy of what.

The key space is cut into SLICES ranges (pipeline/text/dedup_fingerprints.py); `plan` joins
consecutive ranges into tasks whose rows fit --memory-mb, so that a task's memory is bounded by
the setting, never by the corpus. A task reads its key range of every file's three tables and
writes RECORDs, sorted by document, for the ordered sweep (pipeline/text/dedup_sweep.py):

  SAME      a document whose signature (a: its first holder) or normalised text (b: its first
            holder) an earlier document has: the classes of identical signatures and texts
  SIMILAR   a = the first holder of another signature that shares one band with the document's
            (equal rows, as MinHashLSH compares them) and has an estimated Jaccard similarity of
            at least the threshold: a near-copy candidate. At most CAP of them a band, the
            earliest;
  MORE      past CAP: the band's whole list of signature holders (a: its offset in the task's
            .more.npy, b: its length) for the sweep to read if none of the CAP was kept;
  PARAGRAPH a long paragraph (a: its global number) that an earlier one repeats (b: the first).

A signature stands for every document that has it (exact copies have one signature): candidates
are compared once, whatever the number of copies. A band's list costs its first holders'
comparisons, CAP+1 at most for each when the list is of near-copies of each other.

Usage:
    cuts, row_ranges = plan(stems, memory_bytes, min_tasks)
    bucket_task((row_ranges[:, :, k:k + 2], out_stem), stems=..., doc_offsets=..., ...)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.text.dedup_fingerprints import (
    SLICES,
    TABLES,
    SignatureReader,
    meta_path,
    read_rows,
    save_array,
    sig_path,
    table_path,
)

RECORD = np.dtype([("doc", "<u8"), ("kind", "u1"), ("band", "u1"), ("a", "<u8"), ("b", "<u8")])
SAME, SIMILAR, MORE, PARAGRAPH = 0, 1, 2, 3
CAP = 8                 # similar first holders recorded a band; past that the sweep reads the list
BLOCK = 4096            # signatures compared at once in a long band list
MEMORY_FACTOR = 4       # a task holds its rows about this many times over while it sorts them


def plan(stems: list[str], memory_bytes: int, min_tasks: int) -> tuple[list[int], np.ndarray]:
    """Consecutive key slices joined into tasks of at most `memory_bytes` (a slice alone may be
    more) and at least `min_tasks` of them where there are rows for them: (cuts, the slice
    boundaries; row_ranges, int64[file, table, cut]: the first row of each cut in each file)."""
    counts = np.zeros((len(TABLES), SLICES), dtype=np.int64)
    for stem in stems:
        with np.load(meta_path(stem)) as meta:
            for t, name in enumerate(TABLES):
                counts[t] += np.diff(meta[f"bounds_{name}"])
    sizes = MEMORY_FACTOR * sum(counts[t] * dtype.itemsize for t, dtype in enumerate(TABLES.values()))
    target = max(1, min(memory_bytes, -(-int(sizes.sum()) // max(1, min_tasks))))
    cuts, held = [0], 0
    for s, size in enumerate(sizes.tolist()):
        if held and held + size > target:
            cuts.append(s)
            held = 0
        held += size
    cuts.append(SLICES)
    row_ranges = np.zeros((len(stems), len(TABLES), len(cuts)), dtype=np.int64)
    for f, stem in enumerate(stems):
        with np.load(meta_path(stem)) as meta:
            for t, name in enumerate(TABLES):
                row_ranges[f, t] = meta[f"bounds_{name}"][cuts]
    return cuts, row_ranges


def records_path(out_stem: str | Path) -> Path:
    return Path(f"{out_stem}.records.npy")


def more_path(out_stem: str | Path) -> Path:
    return Path(f"{out_stem}.more.npy")


def bucket_task(job: tuple[np.ndarray, str], stems: list[str], doc_offsets: np.ndarray,
                para_offsets: np.ndarray, threshold: float, num_perm: int, rows: int) -> dict:
    """One task: the records of a key range (see the module docstring); returns its counts."""
    ranges, out_stem = job
    found: list[np.ndarray] = []
    docs, doc_numbers = _gather(stems, ranges, 0, doc_offsets)
    found.append(_same_records(docs, doc_numbers))
    del docs, doc_numbers
    paras, para_docs = _gather(stems, ranges, 2, doc_offsets)
    found.append(_paragraph_records(paras, para_docs, _global(stems, ranges, 2, paras, para_offsets)))
    del paras, para_docs
    bands, band_docs = _gather(stems, ranges, 1, doc_offsets)
    reader = SignatureReader([sig_path(s) for s in stems], doc_offsets, num_perm)
    similar, lists = _similar_records(bands, band_docs, reader, threshold, rows)
    found.append(similar)
    records = np.concatenate(found)
    records = records[np.lexsort((records["b"], records["a"], records["band"], records["kind"], records["doc"]))]
    if len(records) > 1:   # the same candidate met in several bands once
        same = np.ones(len(records), dtype=bool)
        same[1:] = records[1:] != records[:-1]
        records = records[same]
    save_array(records_path(out_stem), records)
    save_array(more_path(out_stem), lists)
    kinds = np.bincount(records["kind"], minlength=4)
    return {"records": len(records), "same": int(kinds[SAME]), "similar": int(kinds[SIMILAR]),
            "more": int(kinds[MORE]), "paragraphs": int(kinds[PARAGRAPH])}


def _gather(stems: list[str], ranges: np.ndarray, table: int, doc_offsets: np.ndarray):
    """(rows, global document numbers) of table `table` in this key range, over every file."""
    name = list(TABLES)[table]
    parts, numbers = [], []
    for f, stem in enumerate(stems):
        lo, hi = ranges[f, table]
        if hi > lo:
            part = read_rows(table_path(stem, name), lo, hi)
            parts.append(part)
            numbers.append(part["doc"].astype(np.int64) + doc_offsets[f])
    if not parts:
        return np.zeros(0, TABLES[name]), np.zeros(0, np.int64)
    return np.concatenate(parts), np.concatenate(numbers)


def _global(stems, ranges, table: int, rows: np.ndarray, para_offsets: np.ndarray) -> np.ndarray:
    """Global paragraph numbers of `rows` (gathered file after file by _gather)."""
    sizes = [max(0, int(ranges[f, table, 1] - ranges[f, table, 0])) for f in range(len(stems))]
    return rows["para"].astype(np.int64) + np.repeat(np.asarray(para_offsets[:len(stems)], np.int64), sizes)


def _firsts(*columns: np.ndarray) -> np.ndarray:
    """For sorted rows: the index of the first row of each row's run of equal `columns`."""
    n = len(columns[0])
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = np.any([c[1:] != c[:-1] for c in columns], axis=0)
    return np.maximum.accumulate(np.where(new, np.arange(n), 0))


def _records(doc, kind: int, a, b=0, band=0) -> np.ndarray:
    out = np.zeros(len(doc), RECORD)
    out["doc"], out["kind"], out["band"], out["a"], out["b"] = doc, kind, band, a, b
    return out


def _same_records(docs: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """SAME: each document's first holder of its signature and of its text (0-hash texts: none)."""
    order = np.lexsort((docs["text"], docs["key"]))   # stable: document order inside a run
    key, text, numbers = docs["key"][order], docs["text"][order], numbers[order]
    runs = np.flatnonzero(_firsts(key) == np.arange(len(key)))
    sig_first = np.repeat(np.minimum.reduceat(numbers, runs), np.diff(np.append(runs, len(key)))) \
        if len(key) else numbers
    text_first = np.where(text != 0, numbers[_firsts(key, text)], numbers)
    copy = (sig_first != numbers) | (text_first != numbers)
    return _records(numbers[copy], SAME, sig_first[copy], text_first[copy])


def _paragraph_records(paras: np.ndarray, docs: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """PARAGRAPH: each long paragraph that repeats an earlier one, with the first."""
    order = np.argsort(paras["key"], kind="stable")
    key, docs, numbers = paras["key"][order], docs[order], numbers[order]
    first = numbers[_firsts(key)]
    repeat = first != numbers
    return _records(docs[repeat], PARAGRAPH, numbers[repeat], first[repeat])


def _similar_records(bands: np.ndarray, docs: np.ndarray, reader: SignatureReader, threshold: float,
                     rows: int) -> tuple[np.ndarray, np.ndarray]:
    """SIMILAR and MORE records of the band lists that hold more than one signature, and the
    lists that MORE points to."""
    order = np.lexsort((bands["band"], bands["key"]))
    bands, docs = bands[order], docs[order]
    starts = np.flatnonzero(_firsts(bands["key"], bands["band"]) == np.arange(len(bands)))
    ends = np.append(starts[1:], len(bands))
    mixed = np.zeros(len(starts), dtype=bool)          # a list with more than one signature
    other = np.flatnonzero(bands["sig"] != bands["sig"][_firsts(bands["key"], bands["band"])])
    mixed[np.searchsorted(starts, other, side="right") - 1] = True
    found, lists, listed = [], [], 0
    for lo, hi in zip(starts[mixed].tolist(), ends[mixed].tolist()):
        members, sigs = docs[lo:hi], bands["sig"][lo:hi]
        _keys, first, cls = np.unique(sigs, return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first))           # classes in the order of their first holder
        holders = members[np.sort(first)]
        near = _near_holders(reader.rows(holders), int(bands["band"][lo]), threshold, rows)
        for d, c in zip(members.tolist(), rank[cls.ravel()].tolist()):
            cands = [holders[i] for i in near[c] if holders[i] < d]
            if cands:
                found.append(_records(np.full(len(cands), d), SIMILAR, cands, band=bands["band"][lo]))
            if len(near[c]) > CAP and holders[near[c][-1]] < d:
                found.append(_records([d], MORE, [listed], [len(holders)], band=bands["band"][lo]))
        if any(len(n) > CAP for n in near):
            lists.append(holders)
            listed += len(holders)
    records = np.concatenate(found) if found else np.zeros(0, RECORD)
    more = np.concatenate(lists) if lists else np.zeros(0, np.int64)
    # a list recorded but not pointed to by a MORE record costs disk only
    return records, more.astype(np.int64)


def _near_holders(sigs: np.ndarray, band: int, threshold: float, rows: int) -> list[list[int]]:
    """For each signature of a band list: the first CAP+1 others (in list order) with an equal
    band and an estimated Jaccard similarity of at least `threshold`."""
    m, num_perm = sigs.shape
    cut = slice(band * rows, (band + 1) * rows)
    near: list[list[int]] = []
    for c in range(m):
        hits: list[int] = []
        for lo in range(0, m, BLOCK):
            block = sigs[lo:lo + BLOCK]
            ok = (np.count_nonzero(block == sigs[c], axis=1) / num_perm >= threshold)
            ok &= np.all(block[:, cut] == sigs[c, cut], axis=1)
            if lo <= c < lo + BLOCK:
                ok[c - lo] = False
            hits += (lo + np.flatnonzero(ok)).tolist()
            if len(hits) > CAP:
                break
        near.append(hits[:CAP + 1])
    return near
