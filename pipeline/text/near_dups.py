"""Fingerprints of documents for deduplication: exact hashes of normalised text, MinHash
signatures (datasketch) for near-duplicates, and the keys that put them in buckets on disk.

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
    b, r = lsh_bands(0.5)                    # datasketch MinHashLSH's bands for the threshold
    band_keys(sigs, b, r)                    # np.uint64[n, b]: one key a band (its band number mixed in)
    signature_keys(sigs)                     # np.uint64[n]: equal signatures, equal keys
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


def lsh_bands(threshold: float, num_perm: int = NUM_PERM) -> tuple[int, int]:
    """(bands, rows a band) of datasketch's MinHashLSH for `threshold` (equal weight to misses and
    false candidates; candidates are checked on the signatures afterwards): two documents are
    candidates when one band of their signatures is equal."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    return lsh.b, lsh.r


_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on an array (uint64 arithmetic wraps around)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX2
    return x ^ (x >> np.uint64(31))


def _row_keys(values: np.ndarray, salt: int) -> np.ndarray:
    """A 64-bit key of each row of `values` (uint32), the same on every machine."""
    key = _mix(np.full(len(values), salt, dtype=np.uint64))
    for column in values.T.astype(np.uint64):
        key = _mix(key ^ column)
    return key


def band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """np.uint64[n, bands]: the key of each band of each signature (band i: slots i*rows to
    (i+1)*rows, as MinHashLSH cuts them), its band number mixed in."""
    return np.stack([_row_keys(sigs[:, i * rows:(i + 1) * rows], i + 1) for i in range(bands)], axis=1)


def signature_keys(sigs: np.ndarray) -> np.ndarray:
    """np.uint64[n]: a key of each whole signature."""
    return _row_keys(sigs, 0)
