"""Fast WordPiece for whole shards: the ids of `vocab.core.bert_tokenizer.make_tokenizer`, several times faster.

Usage:
    wp = FastWordPiece(load_vocab("data/hu/vocab"))
    ids, counts = wp.encode_text("Első mondat.\nMásodik.")   # flat int32 ids, ids per line
    wp.tokenize("Árvíztűrő tükörfúrógép")                     # list of ids for one text

Calling the Hugging Face tokenizer line by line costs time per call and per character, yet a
shard repeats the same words over and over. So a block of text is normalised and pre-split at
once with numpy (a vectorised `str.translate` over code points), its words are told apart by
hashing, only words never seen before go through a Python WordPiece, and numpy maps the
pieces back. A cache of known words (sorted hashes -> ids) carries over between blocks and
shards.

Exactness: BERT's normaliser and pre-tokenizer act on one character at a time (clean text,
lower-case, strip accents, spaces around CJK characters, punctuation isolated, whitespace
splits), so each distinct character is classified by asking the Hugging Face normaliser and
pre-tokenizer themselves (vocab/core/normalizer.py), and the answers form the translation table. Characters whose
behaviour a table cannot express send their line to the Hugging Face tokenizer unchanged
(rare; counted in `fallback_lines`). Words are merged only if two independent 64-bit hashes
and the length agree; a clash on the first hash alone falls back to exact string keys.
"""
from __future__ import annotations

import unicodedata
from itertools import chain, count

import numpy as np

from vocab.core.bert_tokenizer import make_tokenizer
from vocab.core.normalizer import CharNormalizer, split_kind

_CACHE_LIMIT = 300_000  # distinct words remembered across calls (about 40 bytes each)


class FastWordPiece:
    """WordPiece ids for many lines at once, identical to `make_tokenizer(spec)` (no specials)."""

    def __init__(self, spec, max_input_chars_per_word: int = 100):
        self.spec = spec
        self.max_chars = max_input_chars_per_word
        self.vocab = {t: i for i, t in enumerate(spec.tokens)}
        self.unk_id = spec.unk_id
        self.cont = {t[2:]: i for i, t in enumerate(spec.tokens) if t.startswith("##")}
        # Longest pieces, to start the greedy longest-match there rather than at the word's end.
        self.max_first = max(len(t) for t in self.vocab)
        self.max_cont = max(map(len, self.cont), default=1)
        self._unk = (self.unk_id,)
        self._tails: dict[str, tuple[int, ...]] = {}   # end of a word -> its ## pieces
        # The normaliser of make_tokenizer; the full HF tokenizer (about 9 MB) is only built if
        # a line needs it (see _splice).
        self._norm = CharNormalizer(spec.lower_case, spec.strip_accents)
        self._hf = None
        self._table: dict[int, str] = {}      # char -> its normalised, pre-split form
        self._known: set[str] = {"\n"}        # characters already classified
        self._complex: set[str] = set()       # characters only the HF tokenizer handles
        self._pieces: dict[str, tuple[int, ...]] = {}   # word -> ids, across calls
        self._cache = _empty_cache()   # sorted by hash: known words and their ids
        self.fallback_lines = 0
        self.exact = False   # True: dedupe words as Python strings (no hashing), for tests

    # -- character classes -------------------------------------------------------------------

    @staticmethod
    def _char_kind(ch: str) -> str:
        """'space', 'punct', 'join' or 'complex', as BertPreTokenizer sees `ch` (one seam for tests)."""
        return split_kind(ch)

    def _learn_chars(self, chars: set[str]) -> None:
        for c in chars - self._known:
            self._known.add(c)
            n = self._norm.char(c)
            out = []
            ok = True
            for ch in n:
                kind = self._char_kind(ch)
                if kind == "space":
                    out.append(" ")
                elif kind == "punct":
                    out.append(f" {ch} ")
                elif kind == "join" and not ch.isspace() and ch != "\n":
                    out.append(ch)
                else:   # str.split would cut where BERT does not, or the class is unclear
                    ok = False
            # Canonical reordering in NFD (strip_accents) acts across characters: leave marks
            # that reorder yet survive stripping to the HF tokenizer.
            if self.spec.strip_accents and unicodedata.combining(c) and unicodedata.category(c) != "Mn":
                ok = False
            if not ok:
                self._complex.add(c)
                continue
            s = "".join(out)
            if s != c:
                self._table[ord(c)] = s

    # -- WordPiece ---------------------------------------------------------------------------

    def _wordpiece(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first, as BERT and HF WordPiece do; [UNK] for the whole word."""
        return self._wordpieces([word])[0]

    def _wordpieces(self, words) -> list[tuple[int, ...]]:
        """The ids of each word (see _wordpiece), in one loop with local names: it runs once per
        distinct word of a shard, tens of thousands of times.

        The first piece is the longest vocab prefix; the rest of the word is matched against
        the ## pieces, and that rest's pieces are remembered (inflected words share endings).
        """
        get = self.vocab.get
        tails = self._tails
        tail_of = tails.get
        continuation = self._continuation
        max_chars, max_first, unk = self.max_chars, self.max_first, self._unk
        out = []
        append = out.append
        for word in words:
            n = len(word)
            if n > max_chars:
                append(unk)
                continue
            whole = get(word)
            if whole is not None:
                append((whole,))
                continue
            end = n - 1 if n - 1 < max_first else max_first
            while end:
                first = get(word[:end])
                if first is not None:
                    break
                end -= 1
            else:
                append(unk)
                continue
            rest = word[end:]
            tail = tail_of(rest)
            if tail is None:
                tail = tails[rest] = continuation(rest)
            append((first,) + tail if tail else unk)
        return out

    def _continuation(self, rest: str) -> tuple[int, ...]:
        """The ## pieces of the end of a word, or () when some part has none (then [UNK])."""
        get = self.cont.get
        out = []
        start, n, maxp = 0, len(rest), self.max_cont
        while start < n:
            end = min(n, start + maxp)
            while end > start:
                found = get(rest[start:end])
                if found is not None:
                    break
                end -= 1
            else:
                return ()
            out.append(found)
            start = end
        return tuple(out)

    # -- public API --------------------------------------------------------------------------

    def encode_text(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids, counts) for `text` split at "\\n": all ids (int32) and the number per line."""
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        n_lines = text.count("\n") + 1
        size = int(cps.max()) + 1 if len(cps) else 1
        present = np.zeros(size, dtype=bool)
        present[cps] = True
        chars = np.flatnonzero(present)
        del present
        self._learn_chars({chr(c) for c in chars.tolist()})
        hard = self._hard_lines(cps, chars)
        if hard:
            lines = text.split("\n")
            for i in hard:
                lines[i] = ""
            cps = np.frombuffer("\n".join(lines).encode("utf-32-le"), dtype=np.uint32)
            del lines
        out = self._translate(cps, size)
        del cps

        # words: maximal runs of characters other than " " and "\n" (all BERT whitespace is " " now)
        solid = (out != 32) & (out != 10)
        edge = np.diff(solid.view(np.int8), prepend=0, append=0)
        starts = np.flatnonzero(edge == 1)
        ends = np.flatnonzero(edge == -1)
        del edge
        line_of_word = np.searchsorted(np.flatnonzero(out == 10), starts)

        found = None if self.exact else self._lookup_hashed(out, solid, starts, ends)
        del solid
        if found is None:   # the plain way: Python strings in a dict
            found = self._lookup_exact(out)
        del out
        flat, first, wl = found                  # per word: its ids are flat[first:first + wl]
        ids = _gather_ranges(flat, first, wl)
        counts = np.bincount(line_of_word, weights=wl, minlength=n_lines).astype(np.int64)
        if hard:
            ids, counts = self._splice(ids, counts, hard, text)
        return ids, counts

    def _lookup_exact(self, out: np.ndarray):
        """(flat ids, first, count) per word, deduplicating words as Python strings."""
        words = out.tobytes().decode("utf-32-le").split()
        index = dict(zip(dict.fromkeys(words), count()))
        inv = np.fromiter(map(index.__getitem__, words), dtype=np.int64, count=len(words))
        del words
        if len(self._pieces) > _CACHE_LIMIT:
            self._pieces.clear()
        word_ids = []
        for w in index:
            pieces = self._pieces.get(w)
            if pieces is None:
                pieces = self._pieces[w] = self._wordpiece(w)
            word_ids.append(pieces)
        lens = np.fromiter(map(len, word_ids), dtype=np.int64, count=len(word_ids))
        flat = np.fromiter(chain.from_iterable(word_ids), dtype=np.int32, count=int(lens.sum()))
        first = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=first[1:])
        return flat, first[inv], lens[inv]

    def _lookup_hashed(self, out, solid, starts, ends):
        """(flat ids, first, count) per word, or None on a hash clash.

        Each word gets two 64-bit hashes, sums of a strong mix of (character, position in the
        word). Distinct words are found with np.unique on the first hash and checked against
        the second and the length, so two different words are never merged unless all three
        agree. Known words are looked up in a sorted numpy cache (hash -> ids) that persists
        across calls; only new words go through the Python WordPiece.
        """
        if len(starts) == 0:
            z = np.zeros(0, dtype=np.int64)
            return np.zeros(0, dtype=np.int32), z, z
        wlen = ends - starts
        offset = np.zeros(len(starts), dtype=np.int64)
        np.cumsum(wlen[:-1], out=offset[1:])
        # key of each character: its code point and its position inside the word
        key = np.repeat(offset, wlen)
        np.subtract(np.arange(len(key), dtype=np.int64), key, out=key)
        key = key.view(np.uint64)
        key <<= np.uint64(32)
        key |= out[solid]
        key ^= np.uint64(0x9E3779B97F4A7C15)
        m = splitmix64(key)
        del key
        h1 = np.add.reduceat(m, offset)
        m ^= m >> np.uint64(29)
        m *= np.uint64(0xD6E8FEB86659FD93)
        h2 = np.add.reduceat(m, offset)
        del m
        uniq, first, inv = np.unique(h1, return_index=True, return_inverse=True)
        u_h2, u_len = h2[first], wlen[first]
        if not (np.array_equal(h2, u_h2[inv]) and np.array_equal(wlen, u_len[inv])):
            return None
        c = self._cache
        if len(c["h1"]) > _CACHE_LIMIT:
            self._cache = c = _empty_cache()
            self._tails.clear()
        if len(c["h1"]):
            at = np.minimum(np.searchsorted(c["h1"], uniq), len(c["h1"]) - 1)
            known = c["h1"][at] == uniq
            if np.any(known & ((c["h2"][at] != u_h2) | (c["len"][at] != u_len))):
                return None
        else:
            known = np.zeros(len(uniq), dtype=bool)
        new = np.flatnonzero(~known)
        if len(new):
            text = out.tobytes().decode("utf-32-le")
            word_ids = self._wordpieces([text[st:st + n] for st, n in
                                         zip(starts[first[new]].tolist(), u_len[new].tolist())])
            del text
            self._cache = c = _cache_add(c, uniq[new], u_h2[new], u_len[new], word_ids)
            at = np.searchsorted(c["h1"], uniq)
        return c["flat"], c["first"][at][inv], c["count"][at][inv]

    def _hard_lines(self, cps: np.ndarray, chars: np.ndarray) -> list[int]:
        """Lines holding a character only the HF tokenizer handles (rare)."""
        if not self._complex or self._complex.isdisjoint(chr(c) for c in chars.tolist()):
            return []
        complex_cps = np.array(sorted(ord(c) for c in self._complex), dtype=np.uint32)
        at = np.flatnonzero(np.isin(cps, complex_cps))
        newlines = np.flatnonzero(cps == 10)
        return sorted(set(np.searchsorted(newlines, at).tolist()))

    def _splice(self, ids: np.ndarray, counts: np.ndarray, hard: list[int], text: str):
        """Put the HF tokenizer's ids for the hard lines (which produced none) in their place."""
        lines = text.split("\n")
        self.fallback_lines += len(hard)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        parts, prev = [], 0
        counts = counts.copy()
        for i in hard:
            if self._hf is None:
                self._hf = make_tokenizer(self.spec, max_input_chars_per_word=self.max_chars)
            hf = self._hf.encode(lines[i], add_special_tokens=False).ids
            parts.append(ids[offsets[prev]:offsets[i]])
            parts.append(np.asarray(hf, dtype=np.int32))
            counts[i] = len(hf)
            prev = i
        parts.append(ids[offsets[prev]:])
        return np.concatenate(parts).astype(np.int32, copy=False), counts

    def _translate(self, cps: np.ndarray, size: int) -> np.ndarray:
        """Apply the character table to the code points (a vectorised str.translate)."""
        table = self._table
        keys = [k for k in table if k < size]
        if not keys:
            return cps
        entry = np.zeros(size, dtype=np.int32)          # 0: the character stays as it is
        entry[np.array(keys, dtype=np.int64)] = np.arange(1, len(keys) + 1, dtype=np.int32)
        outs = [table[k] for k in keys]
        elen = np.array([1] + [len(s) for s in outs], dtype=np.int64)
        epos = np.zeros(len(elen) + 1, dtype=np.int64)
        np.cumsum(elen, out=epos[1:])
        eflat = np.frombuffer(("\0" + "".join(outs)).encode("utf-32-le"), dtype=np.uint32)
        e = entry[cps]
        changed = np.flatnonzero(e)
        if len(changed) == 0:
            return cps
        n_out = elen[e]
        del e
        dest = np.zeros(len(cps) + 1, dtype=np.int64)
        np.cumsum(n_out, out=dest[1:])
        out = np.repeat(cps, n_out)
        ec = entry[cps[changed]]
        out[_ranges(dest[changed], elen[ec])] = eflat[_ranges(epos[ec], elen[ec])]
        return out

    def tokenize(self, text: str) -> list[int]:
        """The ids of one text (newlines are whitespace, as for the HF tokenizer)."""
        ids, _ = self.encode_text(text.replace("\n", " "))
        return ids.tolist()


def _empty_cache() -> dict[str, np.ndarray]:
    z = np.zeros(0, dtype=np.int64)
    return {"h1": z.view(np.uint64), "h2": z.view(np.uint64).copy(), "len": z, "first": z.copy(),
            "count": z.copy(), "flat": np.zeros(0, dtype=np.int32)}


def _cache_add(c: dict, h1, h2, lens, word_ids: list) -> dict:
    """The cache with new words (hash h1, check hash h2, length, ids) merged in, still sorted."""
    count_ = np.fromiter(map(len, word_ids), dtype=np.int64, count=len(word_ids))
    flat = np.fromiter(chain.from_iterable(word_ids), dtype=np.int32, count=int(count_.sum()))
    first = np.zeros(len(count_), dtype=np.int64)
    np.cumsum(count_[:-1], out=first[1:])
    first += len(c["flat"])
    # h1 arrives sorted (from np.unique): merge by insertion, not a full re-sort
    at = np.searchsorted(c["h1"], h1)
    return {
        "h1": np.insert(c["h1"], at, h1),
        "h2": np.insert(c["h2"], at, h2),
        "len": np.insert(c["len"], at, lens),
        "first": np.insert(c["first"], at, first),
        "count": np.insert(c["count"], at, count_),
        "flat": np.concatenate([c["flat"], flat]),
    }


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise and in place (uint64 arithmetic wraps)."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The indices s, s+1, ..., s+l-1 for each (s, l), concatenated."""
    total = int(lens.sum())
    out_starts = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=out_starts[1:])
    idx = np.arange(total, dtype=np.int64)
    idx += np.repeat(starts - out_starts, lens)
    return idx


def _gather_ranges(flat: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenate flat[s:s+l] for each (s, l), vectorised."""
    if len(lens) == 0 or int(lens.sum()) == 0:
        return np.zeros(0, dtype=flat.dtype)
    return flat[_ranges(starts, lens)]
