"""dedup's third step: the keep rule, applied once over every document in keep order.

The rule (pipeline/stages/dedup.py): a document goes when an earlier KEPT document has its
normalised text (EXACT), or shares a band with it at an estimated Jaccard similarity of at least
the threshold (NEAR); a long paragraph goes when an earlier kept document holds it, and a
document left without a long paragraph of its own goes (PARAGRAPHS). "Kept" makes the rule
depend on order (A~B, B~C, A!~C: B goes for A, and C stays), so it is applied in order, with
what the buckets found (pipeline/text/dedup_buckets.py) and one bit a document or paragraph:
is a kept document among the holders of this signature, this text, this paragraph? A class of
equal signatures, texts or paragraphs is named by its first holder, and at most one of its
members is ever kept (a later one would match it). Memory: 3 bits a document and 1 a
paragraph (5 MB at 10 million documents) and one file's records at a time.

A document without a record (nothing earlier like it, no repeated paragraph) is kept without a
look; only the others are decided one by one.

Usage:
    result = sweep_files(files, doc_offsets, para_offsets, bucket_stems, threshold, num_perm, rows)
    result["counts"][i]       # {"exact": .., "near": .., "paragraphs": ..} of file i
    result["examples"]        # removed pairs: reason, source, similarity, removed, kept (global numbers)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from common.atomic import atomic_path
from pipeline.core.report import progress
from pipeline.text.dedup_buckets import MORE, PARAGRAPH, RECORD, SAME, SIMILAR, more_path, records_path
from pipeline.text.dedup_fingerprints import SignatureReader, meta_path, read_rows, row_count, sig_path

KEEP, EXACT, NEAR, PARAGRAPHS = 0, 1, 2, 3
REASONS = {EXACT: "exact", NEAR: "near", PARAGRAPHS: "paragraphs"}
EXAMPLES = 3              # removed pairs per reason and source kept for the report
CHUNK = 8192              # records read at a time from each bucket's file


class Bits:
    """One bit per number, in a bytearray."""

    def __init__(self, size: int):
        self.data = bytearray((size + 7) // 8)

    def __getitem__(self, i: int) -> bool:
        return bool(self.data[i >> 3] >> (i & 7) & 1)

    def set(self, i: int) -> None:
        self.data[i >> 3] |= 1 << (i & 7)

    def set_many(self, numbers: np.ndarray) -> None:
        view = np.frombuffer(self.data, dtype=np.uint8)
        np.bitwise_or.at(view, numbers >> 3, (1 << (numbers & 7)).astype(np.uint8))


class RecordStream:
    """One bucket task's records (sorted by document), read CHUNK rows at a time."""

    def __init__(self, path: Path):
        self.path, self.total, self.pos = path, row_count(path), 0
        self.held = np.zeros(0, RECORD)

    def before(self, end: int) -> np.ndarray:
        """The records of documents numbered below `end` that were not returned yet."""
        while self.pos < self.total and (not len(self.held) or int(self.held["doc"][-1]) < end):
            chunk = read_rows(self.path, self.pos, min(self.total, self.pos + CHUNK))
            self.held, self.pos = np.concatenate([self.held, chunk]), self.pos + len(chunk)
        cut = int(np.searchsorted(self.held["doc"], end))
        out, self.held = self.held[:cut], self.held[cut:]
        return out


class Sweep:
    """The keep rule over documents met in keep order (see the module docstring)."""

    def __init__(self, documents: int, paragraphs: int, signatures: SignatureReader, lists: list[Path],
                 threshold: float, rows: int):
        self.exact, self.sig, self.kept = Bits(documents), Bits(documents), Bits(documents)
        self.para = Bits(paragraphs)
        self.signatures, self.lists, self.threshold, self.rows = signatures, lists, threshold, rows
        self.members: dict[tuple[str, int], int] = {}   # class -> its kept member, where not the first
        self.examples: list[dict] = []
        self.source = ""

    def file(self, doc0: int, para0: int, start: np.ndarray, long: np.ndarray, records: np.ndarray,
             tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(reason per document, paragraph removed?) of one file whose first document is number
        `doc0` and first paragraph `para0`; `records` its records, `tasks` the bucket of each."""
        n = len(start) - 1
        reasons, para_drop = np.zeros(n, dtype=np.uint8), np.zeros(len(long), dtype=bool)
        local = records["doc"].astype(np.int64) - doc0
        involved, first = np.unique(local, return_index=True)
        ends = np.append(first[1:], len(local))
        plain = np.ones(n, dtype=bool)
        plain[involved] = False
        kept = doc0 + np.flatnonzero(plain)
        for bits in (self.exact, self.sig, self.kept):
            bits.set_many(kept)
        holder = np.repeat(np.arange(n), np.diff(start))
        self.para.set_many(para0 + np.flatnonzero(long & plain[holder]))
        for d, lo, hi in zip(involved.tolist(), first.tolist(), ends.tolist()):
            paras = slice(int(start[d]), int(start[d + 1]))
            reasons[d] = self._decide(doc0 + d, records[lo:hi].tolist(), tasks[lo:hi].tolist(),
                                      para0 + paras.start, long[paras], para_drop[paras])
        return reasons, para_drop

    def _decide(self, d: int, records: list[tuple], tasks: list[int], para0: int, long: np.ndarray,
                drop: np.ndarray) -> int:
        sig_first = text_first = d
        similar, more, repeats = [], [], {}
        for (_doc, kind, band, a, b), task in zip(records, tasks):
            if kind == SAME:
                sig_first, text_first = a, b
            elif kind == SIMILAR:
                similar.append(a)
            elif kind == MORE:
                more.append((task, band, a, b))
            elif kind == PARAGRAPH:
                repeats[a] = b
        if text_first != d and self.exact[text_first]:
            self._example(EXACT, d, lambda: (self._member("exact", text_first), 1.0))
            return EXACT
        if sig_first != d and self.sig[sig_first]:
            self._example(NEAR, d, lambda: (self._member("sig", sig_first), 1.0))
            return NEAR
        if any(self.sig[e] for e in similar) or self._listed(d, more, first_only=True):
            self._example(NEAR, d, lambda: self._best(d, similar, more))
            return NEAR
        longs = (para0 + np.flatnonzero(long)).tolist()
        firsts = [repeats.get(p, p) for p in longs]
        dropped = [self.para[q] for q in firsts]
        if any(dropped) and all(dropped):
            return PARAGRAPHS
        drop[np.flatnonzero(long)] = dropped
        for q in firsts:
            self.para.set(q)
        self.exact.set(text_first)
        self.sig.set(sig_first)
        self.kept.set(d)
        for kind, first in (("sig", sig_first), ("exact", text_first)):
            if first != d:
                self.members[(kind, first)] = d
        return KEEP

    def _member(self, kind: str, first: int) -> int:
        return first if self.kept[first] else self.members[(kind, first)]

    def _listed(self, d: int, more: list[tuple], first_only: bool = False) -> list[int]:
        """First holders in the band lists of `more` before `d`, kept, with an equal band and an
        estimated Jaccard similarity of at least the threshold (the first only, if asked)."""
        found: list[int] = []
        for task, band, offset, length in more:
            holders = read_rows(self.lists[task], offset, offset + length)
            holders = [h for h in holders[holders < d].tolist() if self.sig[h]]
            if holders:
                sigs = self.signatures.rows(np.asarray([d, *holders]))
                cut = slice(band * self.rows, (band + 1) * self.rows)
                ok = np.count_nonzero(sigs[1:] == sigs[0], axis=1) / sigs.shape[1] >= self.threshold
                ok &= np.all(sigs[1:, cut] == sigs[0, cut], axis=1)
                found += [h for h, hit in zip(holders, ok.tolist()) if hit]
                if found and first_only:
                    break
        return found

    def _best(self, d: int, similar: list[int], more: list[tuple]) -> tuple[int, float]:
        """(kept document, similarity) of the most similar kept candidate (ties: the earliest)."""
        firsts = sorted({e for e in similar if self.sig[e]} | set(self._listed(d, more)))
        sigs = self.signatures.rows(np.asarray([d, *firsts]))
        similarity = np.count_nonzero(sigs[1:] == sigs[0], axis=1) / sigs.shape[1]
        return min(((self._member("sig", e), float(j)) for e, j in zip(firsts, similarity.tolist())),
                   key=lambda kept_j: (-kept_j[1], kept_j[0]))

    def _example(self, reason: int, removed: int, kept_and_similarity) -> None:
        key = (REASONS[reason], self.source)
        if sum((e["reason"], e["source"]) == key for e in self.examples) < EXAMPLES:
            kept, j = kept_and_similarity()
            self.examples.append({"reason": key[0], "source": key[1], "similarity": round(j, 3),
                                  "removed": removed, "kept": kept})


def sweep_files(files: list[tuple[str, str, Path]], doc_offsets: np.ndarray, para_offsets: np.ndarray,
                bucket_stems: list[str], threshold: float, num_perm: int, rows: int) -> dict:
    """The keep rule over `files` ((source, fingerprint stem, decisions path) in keep order):
    each file's decisions (reasons, para_drop) written to its path; the counts and examples."""
    streams = [RecordStream(records_path(s)) for s in bucket_stems]
    signatures = SignatureReader([sig_path(stem) for _s, stem, _p in files], doc_offsets, num_perm)
    sweep = Sweep(int(doc_offsets[-1]), int(para_offsets[-1]), signatures,
                  [more_path(s) for s in bucket_stems], threshold, rows)
    counts = []
    for fi, (source, stem, out) in enumerate(progress(files, desc="dedup: decide", unit="file",
                                                      disable=len(files) <= 1)):
        with np.load(meta_path(stem)) as meta:
            start, long = meta["start"], meta["long"]
        parts = [s.before(int(doc_offsets[fi + 1])) for s in streams]
        records = np.concatenate(parts) if parts else np.zeros(0, RECORD)
        tasks = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
        order = np.argsort(records["doc"], kind="stable")
        sweep.source = source
        reasons, para_drop = sweep.file(int(doc_offsets[fi]), int(para_offsets[fi]), start, long,
                                        records[order], tasks[order])
        with atomic_path(out) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, reasons=reasons, para_drop=para_drop)
        counts.append({name: int((reasons == code).sum()) for code, name in REASONS.items()})
    return {"counts": counts, "examples": sweep.examples}
