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

One language instead (`words`, bench/bench_stages_scale.py): the documents are prose of one
language's real words (the most frequent 30,000 of a dump's articles, drawn by Zipf's law):
sentences of 5-24 words, the first capitalised, commas inside and a full stop at the end, where
they fall following from the words themselves (a near copy keeps its original's punctuation
where its words are the same); the copies and boilerplate as above.

Usage:
    truth = write_web_corpus(folder, documents=200_000, seed=0, workers=2)   # folder/web_NNNN.txt
    truth = write_web_corpus(folder, 200_000, words=dump_words(dump, tmp))   # one language's prose
    python bench/synthetic_web.py /tmp/web --documents 200000                # the same from a shell
    python bench/synthetic_web.py /tmp/web --documents 200000 --words-from ../shared/data/ukwiki.xml.xz

`truth` (also folder/truth.npz): kind (NEW, EXACT, NEAR, PLATES) and original of each document,
and the key of each title's normalised words (pipeline.text.near_dups.text_hash).
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
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
    """A script's made-up vocabulary (Zipf-distributed) and its boilerplate paragraphs; or, given
    `words` (most frequent first), one real language's, written as sentences."""

    def __init__(self, alphabet: str, seed: int, index: int, words: list[str] | None = None):
        rnd = np.random.default_rng([seed, 10_000 + index])
        if words is None:
            letters = np.array(list(alphabet))
            lengths = rnd.integers(3, 10, VOCAB)
            self.words = ["".join(letters[rnd.integers(0, len(letters), n)]) for n in lengths.tolist()]
        else:
            self.words = list(words[:VOCAB])
        self.prose, self.size = words is not None, len(self.words)
        self.bytes = np.array([len(w.encode()) + 1 for w in self.words])
        weights = 1.0 / np.arange(1, self.size + 1)
        self.cdf = np.cumsum(weights) / weights.sum()
        self.plates = [self.text(self.draw(rnd, 14)) for _ in range(PLATES_A_SCRIPT)]

    def draw(self, rnd, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rnd.random(n)), self.size - 1)

    def title(self, ids) -> str:
        return " ".join([self.words[i] for i in ids])

    def text(self, ids) -> str:
        if not self.prose:
            return self.title(ids)
        out, length = [], 0
        for j, i in enumerate(np.asarray(ids).tolist()):
            word, length = self.words[i], length + 1
            if length == 1:
                word = word[:1].upper() + word[1:]
            mark = ((i + 1) * 2654435761 + j * 40503) % 91    # the word and its place decide
            if j == len(ids) - 1 or length >= 24 or (length >= 5 and mark < 13):
                word, length = word + ".", 0
            elif mark < 20:
                word += ","
            out.append(word)
        return " ".join(out)


def dump_words(dump: Path, workdir: Path) -> list[str]:
    """The words of `dump`'s articles (letters only, by Unicode category), most frequent first."""
    from collections import Counter

    from tests.helpers.web_corpus import sample_documents

    counts = Counter(w for d in sample_documents(workdir, dump) for p in d for w in p.split() if w.isalpha())
    total, form = Counter(), {}
    for w, n in counts.most_common():   # "У" is "у" at a sentence's start: a word, its usual form
        total[w.lower()] += n
        form.setdefault(w.lower(), w)
    return [form[w] for w, _n in total.most_common()]


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
    title = np.minimum(rnd.integers(50, lang.size, 3), lang.size - 1)   # rarer words: titles stay distinct
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
        title = lang.title(rnd.integers(50, lang.size, 3))
        return [title, *[lang.plates[k] for k in rnd.integers(0, PLATES_A_SCRIPT, 2)]]
    script, paras, plate = _words(languages, seed, original if kind in (EXACT, NEAR) else i)
    lang = languages[script]
    if kind == NEAR:
        rnd = np.random.default_rng([seed, 4, i])
        flat = np.concatenate(paras)
        spots = rnd.choice(len(flat), max(1, round(CHANGED * len(flat))), replace=False)
        flat[spots] = lang.draw(rnd, len(spots))
        flat[0] = (flat[0] + 1 + rnd.integers(lang.size - 1)) % lang.size        # the title differs
        paras = np.split(flat, np.cumsum([len(p) for p in paras])[:-1])
    out = [lang.title(paras[0]), *[lang.text(p) for p in paras[1:]]]
    if plate is not None:
        out.append(lang.plates[plate])
    return out


def _write_file(job: tuple) -> list[int]:
    path, seed, lo, hi, kinds, originals, words = job
    languages = ([Language(a, seed, k) for k, a in enumerate(ALPHABETS)] if words is None
                 else [Language("", seed, 0, words)])
    keys, chunks = [], []
    for i, kind, original in zip(range(lo, hi), kinds.tolist(), originals.tolist()):
        doc = document(languages, seed, i, kind, original)
        keys.append(text_hash(normalised_words(doc[0])))
        chunks.append("\n".join(doc))
    path.write_text("\n\n".join(chunks) + "\n", encoding="utf-8")
    return keys


def write_web_corpus(folder: Path, documents: int, seed: int = 0, workers: int = 2,
                     words: list[str] | None = None) -> dict:
    """Write the corpus as folder/web_NNNN.txt (a paragraph a line, a blank line between
    documents) and folder/truth.npz; return the truth (see the module docstring). `words`: one
    language's (dump_words), else eight scripts' made-up ones."""
    folder.mkdir(parents=True, exist_ok=True)
    kinds, original = plan(documents, seed)
    jobs = [(folder / f"web_{k:04d}.txt", seed, lo, min(documents, lo + DOCS_A_FILE), kinds[lo:lo + DOCS_A_FILE],
             original[lo:lo + DOCS_A_FILE], words) for k, lo in enumerate(range(0, documents, DOCS_A_FILE))]
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
    ap.add_argument("--words-from", type=Path, help="a dump: one language's prose of its words")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        words = dump_words(args.words_from, Path(tmp)) if args.words_from else None
    truth = write_web_corpus(args.folder, args.documents, args.seed, args.workers, words)
    counts = np.bincount(truth["kind"], minlength=4)
    size = sum(p.stat().st_size for p in args.folder.glob("web_*.txt"))
    print(f"{args.documents:,} documents, {size / 1e6:,.0f} MB in {args.folder}: {counts[EXACT]:,} exact and "
          f"{counts[NEAR]:,} near copies, {counts[PLATES]:,} of boilerplate only")


if __name__ == "__main__":
    main()
