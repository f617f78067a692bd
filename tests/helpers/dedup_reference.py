"""dedup's keep rule written the plain way, for tests to hold the bucketed stage against: every
document, in keep order, compared with every document kept before it (no index, no buckets).
Also documents of random words in several scripts, with exact and near copies, chains and
repeated paragraphs planted, seeded.

The rule (pipeline/stages/dedup.py): a document goes when an earlier kept one has its normalised
text (exact), or an equal band of their signatures (MinHashLSH's bands) and an estimated Jaccard
similarity of at least the threshold (near); long paragraphs an earlier kept document holds go,
and a document left without a long paragraph of its own goes (paragraphs).

Usage:
    reasons, dropped = reference_decisions(docs_in_keep_order, threshold=0.5)
    docs = planted_documents(seed=0, n=300)          # [(kind, paragraphs)]
"""
from __future__ import annotations

import random

import numpy as np

from pipeline.text.near_dups import NUM_PERM, lsh_bands, normalised_words, signature, text_hash

EXACT, NEAR, PARAGRAPHS = "exact", "near", "paragraphs"
ALPHABETS = ("abcdefghijklmnopqrstuvwxyzáéíóöőúüű", "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
             "αβγδεζηθικλμνξοπρστυφχψω", "ابتثجحخدذرزسشصضطظعغفقكلمنهوي", "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशसह")


def reference_decisions(docs: list[list[str]], threshold: float = 0.5, num_perm: int = NUM_PERM,
                        min_chars: int = 40) -> tuple[list[str | None], list[list[bool]]]:
    """(reason or None for each document, paragraph removed? for each kept document's lines)."""
    bands, rows = lsh_bands(threshold, num_perm)
    kept_sigs: list[np.ndarray] = []
    kept_texts: set[int] = set()
    kept_paras: set[int] = set()
    reasons, dropped = [], []
    for doc in docs:
        words_per_para = [normalised_words(p) for p in doc]
        words = [w for ws in words_per_para for w in ws]
        h, sig = text_hash(words), signature(words, num_perm)
        paras = [text_hash(ws) if sum(map(len, ws)) + len(ws) > min_chars else 0 for ws in words_per_para]
        drop = [bool(p) and p in kept_paras for p in paras]
        reason = None
        if h and h in kept_texts:
            reason = EXACT
        elif kept_sigs and _any_near(np.asarray(kept_sigs), sig, threshold, bands, rows):
            reason = NEAR
        elif any(drop) and all(d or not p for d, p in zip(drop, paras)):
            reason = PARAGRAPHS
        reasons.append(reason)
        dropped.append(drop if reason is None else [False] * len(doc))
        if reason is None:
            kept_sigs.append(sig)
            kept_texts.add(h)
            kept_paras.update(p for p in paras if p)
    return reasons, dropped


def _any_near(kept: np.ndarray, sig: np.ndarray, threshold: float, bands: int, rows: int) -> bool:
    band_equal = np.zeros(len(kept), dtype=bool)
    for b in range(bands):
        band_equal |= np.all(kept[:, b * rows:(b + 1) * rows] == sig[b * rows:(b + 1) * rows], axis=1)
    similar = np.count_nonzero(kept == sig, axis=1) / len(sig) >= threshold
    return bool(np.any(band_equal & similar))


def random_words(rnd: random.Random, n: int) -> list[str]:
    alphabet = rnd.choice(ALPHABETS)
    return ["".join(rnd.choices(alphabet, k=rnd.randint(3, 8))) for _ in range(n)]


def changed(doc: list[str], rnd: random.Random, share: float) -> list[str]:
    """`doc` with `share` of its words replaced by new ones."""
    paras = [p.split() for p in doc]
    spots = [(i, j) for i, p in enumerate(paras) for j in range(len(p))]
    for i, j in rnd.sample(spots, max(1, round(share * len(spots)))):
        paras[i][j] = random_words(rnd, 1)[0]
    return [" ".join(p) for p in paras]


def planted_documents(seed: int, n: int, boilerplate: int = 4) -> list[tuple[str, list[str]]]:
    """[(kind, paragraphs)]: new documents (3 paragraphs, some with a boilerplate paragraph),
    exact copies, copies with 5% or 12% of the words changed (12% of a 12% copy: a chain),
    one paragraph split in two (same text, other paragraphs), clusters of 12 near copies of
    one document, and documents made only of repeated paragraphs; shuffled, seeded."""
    rnd = random.Random(seed)
    plates = [" ".join(random_words(rnd, 12)) for _ in range(boilerplate)]
    out: list[tuple[str, list[str]]] = []
    while len(out) < n:
        roll = rnd.random()
        earlier = [d for _k, d in out]
        if roll < 0.5 or not earlier:
            doc = [" ".join(random_words(rnd, rnd.randint(10, 25))) for _ in range(3)]
            if rnd.random() < 0.3:
                doc.insert(rnd.randint(0, 3), rnd.choice(plates))
            out.append(("new", doc))
        elif roll < 0.6:
            out.append(("exact", list(rnd.choice(earlier))))
        elif roll < 0.75:
            out.append(("near", changed(rnd.choice(earlier), rnd, rnd.choice([0.05, 0.12]))))
        elif roll < 0.8:
            doc = rnd.choice(earlier)
            out.append(("split", [" ".join(doc)] if len(doc) > 1 else doc[0].split(" ", 1)))
        elif roll < 0.85:
            base = rnd.choice(earlier)
            out += [("cluster", changed(base, rnd, 0.08)) for _ in range(12)]
        elif roll < 0.9:
            parts = [p for d in rnd.sample(earlier, min(2, len(earlier))) for p in d[:1]]
            out.append(("paragraphs", parts + [rnd.choice(plates)]))
        else:
            out.append(("short", [" ".join(random_words(rnd, rnd.randint(1, 4)))]))
    return out[:n]
