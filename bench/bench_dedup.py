"""Near-duplicate detection on a corpus with planted copies: recall of the copies and the share
of distinct documents wrongly removed, at dedup's default threshold and around it.

Usage:
    .venv/bin/python bench/bench_dedup.py                         # ../shared/data/ukwiki.xml.xz
    .venv/bin/python bench/bench_dedup.py --dump data/sample/huwiki-sample.xml.bz2 --copies 10

Input: the formatted articles of a dump (extract + format) with at least --min-words words.
A dump has near-copies of its own (ukwiki's year articles share a template paragraph), so the
distinct documents are the articles no two of which reach an exact Jaccard similarity (of
dedup's shingles, computed on the sets, not estimated) of --distinct; how many of the dump's
own articles dedup removes at each threshold is a column of its own. Half of them (A) form a
first file; the second file (a later source) holds the other half (B) shuffled with the
planted copies of A's articles, --copies of each kind: words changed (5, 10, 20, 30% of the
words replaced by a word of another article), sentences reordered, cut (the last 30% of the
words dropped). The dedup stage's own steps run on the two files (pipeline/stages/dedup.py:
fingerprints, buckets and the keep decision at each threshold, whose bands differ). Recall: planted copies removed;
false removal: distinct articles (A and B) removed.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.stages.dedup import THRESHOLD  # noqa: E402
from pipeline.text.dedup_buckets import bucket_task, plan  # noqa: E402
from pipeline.text.dedup_fingerprints import fingerprint_file  # noqa: E402
from pipeline.text.dedup_sweep import KEEP, sweep_files  # noqa: E402
from pipeline.text.documents import format_documents  # noqa: E402
from pipeline.text.near_dups import NUM_PERM, lsh_bands, normalised_words, shingles  # noqa: E402
from tests.helpers.web_corpus import sample_documents  # noqa: E402

KINDS = ("words 5%", "words 10%", "words 20%", "words 30%", "reordered", "cut 30%")


def plant(doc: list[str], kind: str, rnd: random.Random, vocab: list[str]) -> list[str]:
    if kind.startswith("words"):
        share = int(kind.split()[1].rstrip("%")) / 100
        paras = [p.split() for p in doc]
        spots = [(i, j) for i, p in enumerate(paras) for j in range(len(p))]
        for i, j in rnd.sample(spots, max(1, round(share * len(spots)))):
            paras[i][j] = rnd.choice(vocab)
        return [" ".join(p) for p in paras]
    if kind == "reordered":
        sentences = [s for p in doc for s in p.split(". ")]
        rnd.shuffle(sentences)
        return [". ".join(sentences)]
    words = " ".join(doc).split()
    return [" ".join(words[: int(0.7 * len(words))])]


def write(path: Path, docs: list[list[str]]) -> Path:
    path.write_text(format_documents(docs), encoding="utf-8")
    return path


def exact_distinct(articles: list[list[str]], below: float) -> list[list[str]]:
    """The articles whose exact shingle Jaccard with every earlier kept one is below `below`."""
    kept, sets = [], []
    for doc in articles:
        grams = set(shingles(normalised_words(" ".join(doc))))
        if all(len(grams & g) < below * len(grams | g) for g in sets):
            kept.append(doc)
            sets.append(grams)
    return kept


def fingerprint(files: list[Path], threshold: float) -> list[tuple[int, int]]:
    """dedup's first step on `files` for `threshold`'s bands: (documents, paragraphs) of each."""
    bands, rows = lsh_bands(threshold, NUM_PERM)
    return [tuple(fingerprint_file((f, f"{f}.{threshold}"), NUM_PERM, 40, bands, rows).values()) for f in files]


def decide(files: list[Path], threshold: float, sizes: list[tuple[int, int]]) -> list[np.ndarray]:
    """dedup's buckets and keep decision (reason per document) over fingerprinted `files` in order."""
    stems = [f"{f}.{threshold}" for f in files]
    doc_offsets, para_offsets = (np.concatenate([[0], np.cumsum(c)]) for c in zip(*sizes))
    cuts, ranges = plan(stems, 10 ** 9, 1)
    buckets = [f"{stems[0]}.bucket{k}" for k in range(len(cuts) - 1)]
    for k, b in enumerate(buckets):
        bucket_task((ranges[:, :, k:k + 2], b), stems, doc_offsets, para_offsets, threshold, NUM_PERM,
                    lsh_bands(threshold, NUM_PERM)[1])
    sweep_files([("", stem, Path(f"{stem}.decisions.npz")) for stem in stems], doc_offsets, para_offsets,
                buckets, threshold, NUM_PERM, lsh_bands(threshold, NUM_PERM)[1])
    return [np.load(f"{stem}.decisions.npz")["reasons"] for stem in stems]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", type=Path, nargs="+",
                    default=[ROOT.parent / f"shared/data/{lang}wiki.xml.xz" for lang in ("uk", "vi")])
    ap.add_argument("--copies", type=int, default=100, help="planted copies of each kind")
    ap.add_argument("--min-words", type=int, default=50)
    ap.add_argument("--distinct", type=float, default=0.3,
                    help="articles this similar to an earlier one are not counted as distinct")
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    args = ap.parse_args()
    missing = [str(d) for d in args.dump if not d.is_file()]
    if missing:
        raise SystemExit(f"skipped: {', '.join(missing)} not there (give --dump)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        articles = [d for i, dump in enumerate(args.dump) for d in sample_documents(tmp / str(i), dump)
                    if len(" ".join(d).split()) >= args.min_words]
        everything = write(tmp / "all.txt", articles)
        own = {thr: decide([everything], thr, fingerprint([everything], thr))[0] == KEEP for thr in args.thresholds}
        docs = exact_distinct(articles, args.distinct)
        rnd = random.Random(0)
        a_docs, b_docs = docs[0::2], docs[1::2]
        vocab = [w for d in rnd.sample(docs, min(200, len(docs))) for p in d for w in p.split()]
        second = [("distinct", d) for d in b_docs]
        for kind in KINDS:
            second += [(kind, plant(a_docs[i], kind, rnd, vocab))
                       for i in rnd.sample(range(len(a_docs)), min(args.copies, len(a_docs)))]
        rnd.shuffle(second)
        kinds = [k for k, _d in second]
        files = [write(tmp / "a_distinct.txt", a_docs), write(tmp / "b_mixed.txt", [d for _k, d in second])]
        started = time.process_time()
        sizes = {thr: fingerprint(files, thr) for thr in args.thresholds}
        per_doc = (time.process_time() - started) / len(args.thresholds) / (len(docs) + len(second) - len(b_docs))
        print(f"`{' '.join(['python', 'bench/bench_dedup.py', *sys.argv[1:]])}`\n")
        print(f"{len(articles):,} articles of {', '.join(d.name for d in args.dump)} with ≥ "
              f"{args.min_words} words; distinct (exact Jaccard < {args.distinct} to every other): "
              f"{len(docs):,} ({len(a_docs):,} first, {len(b_docs):,} "
              f"with {len(second) - len(b_docs):,} planted copies); fingerprints "
              f"{1e3 * per_doc:.2f} ms CPU per document\n")
        header = " | ".join(KINDS)
        print(f"| threshold | {header} | distinct removed | the dumps' own articles removed | decide s |")
        print("|---:|" + "---:|" * (len(KINDS) + 3))
        for thr in args.thresholds:
            started = time.process_time()
            reasons = decide(files, thr, sizes[thr])
            seconds = time.process_time() - started
            removed = reasons[1] != KEEP
            is_kind = np.asarray(kinds)
            recall = [removed[is_kind == kind].mean() for kind in KINDS]
            wrong = int((reasons[0] != KEEP).sum() + removed[is_kind == "distinct"].sum())
            false = wrong / len(docs)
            mark = " (default)" if thr == THRESHOLD else ""
            print(f"| {thr}{mark} | " + " | ".join(f"{r:.1%}" for r in recall)
                  + f" | {false:.2%} ({wrong}) | {1 - own[thr].mean():.1%} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
