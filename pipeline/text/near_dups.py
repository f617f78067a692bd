"""Fingerprints of documents for deduplication: exact hashes of normalised text and MinHash
signatures (datasketch) for near-duplicates.

Normalised text: NFKC, case-folded, only the words (Unicode `\\w+` runs) joined by one space,
so that punctuation, spacing and case do not hide a copy. Shingles are word 3-grams; where
words are not separated by spaces (Chinese, Japanese, Thai: tokens average over 12 characters)
character 5-grams. Hashes are fixed functions (blake2b, crc32, datasketch's seeded
permutations), never Python's per-process `hash()`, so the same text gives the same
fingerprint in every process and on every machine.

Usage:
    words = normalised_words(paragraph)
    text_hash(words)                         # 64-bit exact-match key (0 for no words)
    sig = signature(doc_words)               # np.uint32[NUM_PERM]
    estimated_jaccard(sig_a, sig_b)          # share of equal slots
    lsh = make_lsh(0.7); lsh.insert(key, lean(sig)); lsh.query(lean(sig))
"""
from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
import zlib

import numpy as np

NUM_PERM = 128
SEED = 1
SCHEME = "affine32"   # datasketch 2's 32-bit hashing: named, so another default never changes it
WORD_NGRAM = 3
CHAR_NGRAM = 5
_WORD = re.compile(r"\w+")


def normalised_words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def text_hash(words: list[str]) -> int:
    """A 64-bit key of the words (0 when there are none: never matched)."""
    if not words:
        return 0
    digest = hashlib.blake2b(" ".join(words).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1


def shingles(words: list[str]) -> list[bytes]:
    """Word 3-grams, or character 5-grams for text written without spaces."""
    if words and sum(map(len, words)) > 12 * len(words):
        chars = "".join(words)
        grams = [chars[i:i + CHAR_NGRAM] for i in range(max(1, len(chars) - CHAR_NGRAM + 1))]
    else:
        n = WORD_NGRAM
        grams = [" ".join(words[i:i + n]) for i in range(max(1, len(words) - n + 1))]
    return [g.encode("utf-8") for g in grams if g]


def _crc32(data: bytes) -> int:
    return zlib.crc32(data)


@functools.lru_cache(maxsize=4)
def _permutations(num_perm: int):
    from datasketch import MinHash

    return MinHash(num_perm=num_perm, seed=SEED, scheme=SCHEME).permutations


def signature(words: list[str], num_perm: int = NUM_PERM) -> np.ndarray:
    """The MinHash signature of a document's words (datasketch, fixed seed), as uint32."""
    from datasketch import MinHash

    m = MinHash(num_perm=num_perm, seed=SEED, hashfunc=_crc32, permutations=_permutations(num_perm),
                scheme=SCHEME)
    grams = shingles(words)
    if grams:
        m.update_batch(grams)
    return m.hashvalues.astype(np.uint32)   # the affine32 scheme's values fit 32 bits


def estimated_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.count_nonzero(a == b)) / len(a)


def lean(sig: np.ndarray):
    from datasketch import LeanMinHash

    return LeanMinHash(seed=SEED, hashvalues=sig, scheme=SCHEME)


def make_lsh(threshold: float, num_perm: int = NUM_PERM):
    """datasketch's MinHashLSH with bands chosen for `threshold` (equal weight to misses and
    false candidates; candidates are checked on the signatures afterwards)."""
    from datasketch import MinHashLSH

    return MinHashLSH(threshold=threshold, num_perm=num_perm)
