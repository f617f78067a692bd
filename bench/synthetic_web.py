"""Synthetic web-like documents for bench/bench_dedup_scale.py, seeded: about 1.8 KB each, in
eight scripts (Latin with Hungarian accents, Cyrillic, Greek, Arabic, Hebrew, Devanagari,
Georgian, Armenian), with planted copies of earlier documents: exact copies (2%), near copies
(2%: 5% of the words changed, the title's first word among them), documents made of a short
title and two boilerplate paragraphs (0.5%); one new document in ten carries a boilerplate
paragraph (200 of them a script) that many documents share.

A document is a short title line (3 words: under dedup's 40 characters, so no paragraph rule
removes it: it names the document in the output), then paragraphs of 20-60 words drawn from a
Zipf vocabulary of 30,000 made-up words of its script, to 1.0-2.0 KB of words. Document i is a pure
function of (seed, i) and a copy regenerates its original from the original's number, so the
files are written in parallel, each document once.

Usage:
    truth = write_web_corpus(folder, documents=200_000, seed=0, workers=2)   # folder/web_NNNN.txt
    python bench/synthetic_web.py /tmp/web --documents 200000                # the same from a shell

`truth` (also folder/truth.npz): kind (NEW, EXACT, NEAR, PLATES) and original of each document,
and the key of each title's normalised words (pipeline.text.near_dups.text_hash).
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.text.near_dups import normalised_words, text_hash  # noqa: E402

ALPHABETS = ("abcdefghijklmnopqrstuvwxyzáéíóöőúüű", "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
             "αβγδεζηθικλμνξοπρστυφχψω", "ابتثجحخدذرزسشصضطظعغفقكلمنهوي", "אבגדהוזחטיכלמנסעפצקרשת",
             "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशसह", "აბგდევზთიკლმნოპჟრსტუფქღყშჩცძწჭხჯჰ",
             "աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆ")
NEW, EXACT, NEAR, PLATES = 0, 1, 2, 3
SHARES = {NEW: 0.955, EXACT: 0.02, NEAR: 0.02, PLATES: 0.005}
VOCAB, PLATES_A_SCRIPT, BOILERPLATE_SHARE, CHANGED = 30_000, 200, 0.1, 0.05
DOCS_A_FILE = 50_000


class Language:
    """A script's made-up vocabulary (Zipf-distributed) and its boilerplate paragraphs."""

    def __init__(self, alphabet: str, seed: int, index: int):
        rnd = np.random.default_rng([seed, 10_000 + index])
        letters = np.array(list(alphabet))
        lengths = rnd.integers(3, 10, VOCAB)
        self.words = ["".join(letters[rnd.integers(0, len(letters), n)]) for n in lengths.tolist()]
        self.bytes = np.array([len(w.encode()) + 1 for w in self.words])
        weights = 1.0 / np.arange(1, VOCAB + 1)
        self.cdf = np.cumsum(weights) / weights.sum()
        self.plates = [self.text(self.draw(rnd, 14)) for _ in range(PLATES_A_SCRIPT)]

    def draw(self, rnd, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rnd.random(n)), VOCAB - 1)

    def text(self, ids) -> str:
        return " ".join([self.words[i] for i in ids])


def plan(documents: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(kind, original) of every document: a copy's original is an earlier new document."""
    rnd = np.random.default_rng([seed, 1])
    kinds = rnd.choice(list(SHARES), size=documents, p=list(SHARES.values())).astype(np.uint8)
    kinds[0] = NEW
    new = np.flatnonzero(kinds == NEW)
    before = np.searchsorted(new, np.arange(documents))     # new documents earlier than each
    original = np.full(documents, -1, dtype=np.int64)
    copy = np.flatnonzero((kinds == EXACT) | (kinds == NEAR))
    original[copy] = new[(rnd.random(len(copy)) * before[copy]).astype(np.int64)]
    return kinds, original


def _words(languages: list[Language], seed: int, i: int) -> tuple[int, list[np.ndarray], int | None]:
    """Document i as a new document: (script, [title ids, paragraph ids...], boilerplate or None)."""
    rnd = np.random.default_rng([seed, 2, i])
    script = int(rnd.integers(len(languages)))
    lang = languages[script]
    title = np.minimum(rnd.integers(50, VOCAB, 3), VOCAB - 1)   # rarer words: titles stay distinct
    paras, size, target = [title], 0, int(rnd.integers(1000, 2000))
    while size < target:
        ids = lang.draw(rnd, int(rnd.integers(20, 60)))
        paras.append(ids)
        size += int(lang.bytes[ids].sum())
    plate = int(rnd.integers(PLATES_A_SCRIPT)) if rnd.random() < BOILERPLATE_SHARE else None
    return script, paras, plate


def document(languages: list[Language], seed: int, i: int, kind: int, original: int) -> list[str]:
    """The paragraphs of document i (see the module docstring)."""
    if kind == PLATES:
        rnd = np.random.default_rng([seed, 3, i])
        lang = languages[int(rnd.integers(len(languages)))]
        return [lang.text(rnd.integers(50, VOCAB, 3)), *[lang.plates[k] for k in rnd.integers(0, PLATES_A_SCRIPT, 2)]]
    script, paras, plate = _words(languages, seed, original if kind in (EXACT, NEAR) else i)
    lang = languages[script]
    if kind == NEAR:
        rnd = np.random.default_rng([seed, 4, i])
        flat = np.concatenate(paras)
        spots = rnd.choice(len(flat), max(1, round(CHANGED * len(flat))), replace=False)
        flat[spots] = lang.draw(rnd, len(spots))
        flat[0] = (flat[0] + 1 + rnd.integers(VOCAB - 1)) % VOCAB        # the title differs
        paras = np.split(flat, np.cumsum([len(p) for p in paras])[:-1])
    out = [lang.text(p) for p in paras]
    if plate is not None:
        out.append(lang.plates[plate])
    return out


def _write_file(job: tuple) -> list[int]:
    path, seed, lo, hi, kinds, originals = job
    languages = [Language(a, seed, k) for k, a in enumerate(ALPHABETS)]
    keys, chunks = [], []
    for i, kind, original in zip(range(lo, hi), kinds.tolist(), originals.tolist()):
        doc = document(languages, seed, i, kind, original)
        keys.append(text_hash(normalised_words(doc[0])))
        chunks.append("\n".join(doc))
    path.write_text("\n\n".join(chunks) + "\n", encoding="utf-8")
    return keys


def write_web_corpus(folder: Path, documents: int, seed: int = 0, workers: int = 2) -> dict:
    """Write the corpus as folder/web_NNNN.txt (a paragraph a line, a blank line between
    documents) and folder/truth.npz; return the truth (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    kinds, original = plan(documents, seed)
    jobs = [(folder / f"web_{k:04d}.txt", seed, lo, min(documents, lo + DOCS_A_FILE), kinds[lo:lo + DOCS_A_FILE],
             original[lo:lo + DOCS_A_FILE]) for k, lo in enumerate(range(0, documents, DOCS_A_FILE))]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        keys = [k for part in pool.imap(_write_file, jobs) for k in part]
    truth = {"kind": kinds, "original": original, "title_key": np.asarray(keys, dtype=np.uint64)}
    np.savez(folder / "truth.npz", **truth)
    return truth


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--documents", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    truth = write_web_corpus(args.folder, args.documents, args.seed, args.workers)
    counts = np.bincount(truth["kind"], minlength=4)
    size = sum(p.stat().st_size for p in args.folder.glob("web_*.txt"))
    print(f"{args.documents:,} documents, {size / 1e6:,.0f} MB in {args.folder}: {counts[EXACT]:,} exact and "
          f"{counts[NEAR]:,} near copies, {counts[PLATES]:,} of boilerplate only")


if __name__ == "__main__":
    main()
