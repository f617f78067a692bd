"""The language check of the filter: langdetect with a fixed seed, for the 55 languages it knows.

langdetect guesses among its own 55 languages only (it calls Armenian Estonian), so for any
other language the check must be skipped, never applied.

`language_prob` gives exactly (to the bit) the probability langdetect's own Detector gives
with seed 0 and the same maximum text length: langdetect's algorithm step by step (text
clean-up, n-grams, the same random draws, the same float operations in the same order), only
faster: per-character and per-word work is cached, the update of the 55 language
probabilities is done by numpy, and the profiles are one matrix, kept on disk under
$XDG_CACHE_HOME/wiki2bert (or ~/.cache/wiki2bert) so that a process need not parse
langdetect's 55 JSON profiles; the cache is rebuilt when missing or unreadable, never required.

Usage:
    codes = langdetect_codes("uk")          # ("uk",), or None when langdetect does not know it
    prepare()                                # seed 0 and load the profiles (once per process)
    language_prob("Текст статті ...", codes) # probability of the language, None if undecidable
    langdetect_probabilities(text, 600)      # the same through langdetect itself (the reference)
"""
from __future__ import annotations

import logging
import os
import random
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from itertools import chain
from pathlib import Path
from zipfile import BadZipFile

import numpy as np
from langdetect import DetectorFactory
from langdetect.detector import Detector
from langdetect.detector_factory import PROFILES_DIRECTORY
from langdetect.utils.ngram import NGram

from common.atomic import atomic_path

log = logging.getLogger("pipeline")

LANGDETECT_LANGS = frozenset(
    "af ar bg bn ca cs cy da de el en es et fa fi fr gu he hi hr hu id it ja kn ko lt lv mk ml "
    "mr ne nl no pa pl pt ro ru sk sl so sq sv sw ta te th tl tr uk ur vi zh-cn zh-tw".split()
)
# Wikipedia codes whose langdetect name differs.
_WIKI_ALIASES = {"zh": ("zh-cn", "zh-tw"), "simple": ("en",), "nb": ("no",)}

SEED = 0                      # langdetect's DetectorFactory.seed, fixed for reproducible runs
_CACHE_FORMAT = 1             # bump when the cached file's layout changes
_WORD_CACHE_LIMIT = 200_000   # words whose n-grams are remembered (cleared when full)


def langdetect_codes(lang: str) -> tuple[str, ...] | None:
    if lang in _WIKI_ALIASES:
        return _WIKI_ALIASES[lang]
    return (lang,) if lang in LANGDETECT_LANGS else None


@dataclass(frozen=True, eq=False)
class Profiles:
    """langdetect's word_lang_prob_map as a matrix: row rows[ngram], a column per language."""
    langs: tuple[str, ...]
    rows: dict[str, int]
    matrix: np.ndarray                     # float64, (n-grams, languages)
    word_rows: dict[str, list[int]] = field(default_factory=dict)  # cache of ngram_rows


_profiles: Profiles | None = None


def prepare() -> None:
    """Fix langdetect's seed and load its profiles (before forking workers, so they share them)."""
    global _profiles
    DetectorFactory.seed = SEED  # langdetect's own detectors, where anything uses them, too
    if _profiles is None:
        _profiles = load_profiles()


def language_prob(text: str, codes: tuple[str, ...], max_chars: int = 600) -> float | None:
    """langdetect's probability that `text` (its first `max_chars` characters) is in `codes`."""
    prepare()
    probs = probabilities(text[:max_chars], max_chars, _profiles)
    if probs is None:
        return None  # no letters langdetect can use: nothing to decide
    return sum(p for lang, p in probs if lang in codes)


def language_probs(texts: list[str], codes: tuple[str, ...], max_chars: int = 600,
                   batch: int = 64) -> list[float | None]:
    """language_prob of each text, the same numbers, detected `batch` texts at a time (numpy
    then works on a (texts x 55) block per step instead of one row: about twice as fast)."""
    prepare()
    profiles = _profiles
    rows = [ngram_rows(detector_text(t[:max_chars], max_chars), profiles) for t in texts]
    wanted = np.array([lang in codes for lang in profiles.langs])
    out: list[float | None] = [None] * len(texts)
    todo = [i for i, r in enumerate(rows) if r]
    for start in range(0, len(todo), batch):
        ids = todo[start:start + batch]
        langprob = _detect_blocks([rows[i] for i in ids], profiles.matrix)
        for i, probs in zip(ids, langprob.tolist()):
            # get_probabilities keeps those above 0.1; the codes' share is their sum
            out[i] = sum(p for p, want in zip(probs, wanted) if want and p > Detector.PROB_THRESHOLD)
    return out


def probabilities(text: str, max_chars: int, profiles: Profiles) -> list[tuple[str, float]] | None:
    """Detector.get_probabilities(): (language, probability) above 0.1, most likely first;
    None where langdetect raises (no n-gram it knows)."""
    rows = ngram_rows(detector_text(text, max_chars), profiles)
    if not rows:
        return None
    langprob = _detect_block(rows, profiles.matrix).tolist()
    found = [(lang, p) for lang, p in zip(profiles.langs, langprob) if p > Detector.PROB_THRESHOLD]
    found.sort(key=lambda lang_p: lang_p[1], reverse=True)  # stable, as langdetect's sort
    return found


def langdetect_probabilities(text: str, max_chars: int) -> list[tuple[str, float]] | None:
    """The same through langdetect's own (slower) Detector, seed 0: what `probabilities` must
    equal, and what language_prob used before."""
    from langdetect import detector_factory
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = SEED
    detector_factory.init_factory()
    det = detector_factory._factory.create()
    det.set_max_text_length(max_chars)
    det.append(text)
    try:
        return [(p.lang, p.prob) for p in det.get_probabilities()]
    except LangDetectException:
        return None


# --- the text langdetect reads: Detector.append, then Detector.cleaning_text ---

_SPACE_RUN = re.compile(" {2,}")
_LATIN = re.compile("[A-z]")          # langdetect's 'A' <= ch <= 'z', [\]^_` included
# langdetect means to exclude Latin Extended Additional here, but compares a block number
# with a block name, so every character from U+0300 on counts as non-Latin.
_NON_LATIN = re.compile("[^\x00-\u02ff]")


def detector_text(text: str, max_chars: int) -> str:
    """URLs and mail addresses out, Vietnamese composed, cut, runs of spaces made one; Latin
    letters dropped from a text mostly in another script."""
    text = Detector.URL_RE.sub(" ", text)
    text = Detector.MAIL_RE.sub(" ", text)
    text = NGram.normalize_vi(text)
    text = _SPACE_RUN.sub(" ", text[:max_chars])
    without_latin, latin = _LATIN.subn("", text)
    if latin * 2 < len(_NON_LATIN.findall(text)):
        return without_latin
    return text


# --- Detector._extract_ngrams ---

_normalized: dict[int, str] = {}      # code point -> NGram.normalize(char), where it differs
_checked: set[str] = set()            # characters already looked up


def ngram_rows(text: str, profiles: Profiles) -> list[int]:
    """The profile rows of the n-grams langdetect extracts from `text`, in its order.

    langdetect's n-gram buffer starts afresh after every space of the normalised text, so
    the n-grams of a word (with the space after it, if any) depend on that word only.
    """
    new = set(text).difference(_checked)
    if new:
        for ch in new:
            norm = NGram.normalize(ch)
            if norm != ch:
                _normalized[ord(ch)] = norm
        _checked.update(new)
    words = text.translate(_normalized).split(" ")
    last = words.pop()
    rows: list[int] = []
    for word in words:
        if word:
            rows += _rows_of(word + " ", profiles)
    if last:
        rows += _rows_of(last, profiles)
    return rows


def _rows_of(word: str, profiles: Profiles) -> list[int]:
    """The rows of a word's n-grams that langdetect knows (cached: words repeat)."""
    cache = profiles.word_rows
    rows = cache.get(word)
    if rows is None:
        if len(cache) >= _WORD_CACHE_LIMIT:
            cache.clear()
        known = profiles.rows
        rows = cache[word] = [known[g] for g in _word_ngrams(word) if g in known]
    return rows


def _word_ngrams(word: str) -> list[str]:
    """NGram.add_char and the loop of _extract_ngrams over one word, from a fresh buffer: at
    each character the 1-, 2- and 3-grams ending there (the buffer starts with a space), none
    inside an upper-case run (a character that is upper case after one that is)."""
    padded = " " + word
    upper = [ch.isupper() for ch in padded]
    out = []
    for j in range(1, len(padded)):
        if upper[j] and upper[j - 1]:
            continue
        if padded[j] != " ":
            out.append(padded[j])
        out.append(padded[j - 1:j + 1])
        if j >= 2:
            out.append(padded[j - 2:j + 1])
    return out


# --- Detector._detect_block ---

def _detect_block(rows: list[int], matrix: np.ndarray) -> np.ndarray:
    """The 7 trials of langdetect with its random draws; each update multiplies the 55
    probabilities element-wise, as langdetect's loop does, so every double is the same."""
    rng = random.Random()
    rng.seed(SEED)
    draw = _chooser(rng, rows)
    n_langs = matrix.shape[1]
    n_trial = 7                                   # Detector.n_trial
    langprob = np.zeros(n_langs)
    block = np.empty((6, n_langs))                # the normalised probabilities, then 5 updates
    normalized, updates = block[0], block[1:]
    prob = np.empty(n_langs)
    take, multiply, divide = matrix.take, np.multiply, np.divide
    for _ in range(n_trial):
        alpha = Detector.ALPHA_DEFAULT + rng.gauss(0.0, 1.0) * Detector.ALPHA_WIDTH
        weight = alpha / Detector.BASE_FREQ
        # iteration 0 (from 1/55 each), then a convergence check after every 5th
        multiply(np.full(n_langs, 1.0 / n_langs), matrix[draw()] + weight, out=prob)
        i = 0
        while True:
            # Detector._normalize_prob: Python's sum (its order and rounding), the maximum
            values = prob.tolist()
            total = sum(values)
            if not total:
                raise ZeroDivisionError("float division by zero")  # as langdetect would
            divide(prob, total, out=normalized)
            # dividing by a positive number keeps the maximum
            if max(values) / total > Detector.CONV_THRESHOLD or i >= Detector.ITERATION_LIMIT:
                break
            take([draw(), draw(), draw(), draw(), draw()], axis=0, out=updates)
            updates += weight
            multiply.reduce(block, axis=0, out=prob)  # row after row, in draw order
            i += 5
        langprob += normalized / n_trial
    return langprob


def _detect_blocks(rows_list: list[list[int]], matrix: np.ndarray) -> np.ndarray:
    """_detect_block of several texts at once, to the bit: each text keeps its own random
    stream and its own trial and iteration counts; the arithmetic of a row is the same, in the
    same order, only done for all the texts still running in one numpy operation."""
    n_texts, n_langs = len(rows_list), matrix.shape[1]
    rngs = []
    for _ in rows_list:
        rng = random.Random()
        rng.seed(SEED)
        rngs.append(rng)
    draws = [_chooser(rng, rows) for rng, rows in zip(rngs, rows_list)]
    langprob = np.zeros((n_texts, n_langs))
    first = np.full(n_langs, 1.0 / n_langs)
    n_trial = 7

    def start_trial(ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        weight = np.array([(Detector.ALPHA_DEFAULT + rngs[t].gauss(0.0, 1.0) * Detector.ALPHA_WIDTH)
                           / Detector.BASE_FREQ for t in ids])
        prob = matrix.take([draws[t]() for t in ids], axis=0)
        prob += weight[:, None]
        prob *= first
        return prob, weight

    ids = np.arange(n_texts)
    prob, weight = start_trial(list(range(n_texts)))
    step = np.zeros(n_texts, dtype=np.int64)
    trial = np.zeros(n_texts, dtype=np.int64)
    while len(ids):
        totals = np.array([sum(v) for v in prob.tolist()])   # Python's sum, as langdetect's
        if not totals.all():
            raise ZeroDivisionError("float division by zero")  # as langdetect would
        normalized = prob / totals[:, None]
        done = (normalized.max(axis=1) > Detector.CONV_THRESHOLD) | (step >= Detector.ITERATION_LIMIT)
        parts = []
        if done.any():
            langprob[ids[done]] += normalized[done] / n_trial
            trial[done] += 1
        going = ~done
        if going.any():
            running = ids[going].tolist()
            picks = [draws[t]() for t in running for _ in range(5)]
            updates = matrix.take(picks, axis=0).reshape(len(running), 5, n_langs)
            updates += weight[going][:, None, None]
            p = normalized[going]
            for j in range(5):               # row after row, in draw order
                p *= updates[:, j]
            parts.append((ids[going], p, weight[going], step[going] + 5, trial[going]))
        again = done & (trial < n_trial)
        if again.any():
            restart = ids[again]
            p, w = start_trial(restart.tolist())
            parts.append((restart, p, w, np.zeros(len(restart), dtype=np.int64), trial[again]))
        if not parts:
            break
        ids, prob, weight, step, trial = (np.concatenate(x) for x in zip(*parts))
    return langprob


def _chooser(rng: random.Random, rows: list[int]):
    """rng.choice(rows) without its two Python calls: the same draws (CPython's choice is
    rows[_randbelow(len(rows))], by rejection over getrandbits of the length's bit count)."""
    getrandbits, n = rng.getrandbits, len(rows)
    bits = n.bit_length()

    def draw() -> int:
        r = getrandbits(bits)
        while r >= n:
            r = getrandbits(bits)
        return rows[r]
    return draw


# --- the profiles: langdetect's own loader, its result cached on disk ---

def load_profiles() -> Profiles:
    """The profiles from the disk cache, or from langdetect (then cached for the next process)."""
    path = _cache_path()
    if path is not None and path.exists():
        try:
            return _read_cache(path)
        except (OSError, EOFError, ValueError, KeyError, IndexError, BadZipFile) as exc:
            # any damage (the cache is never required)
            log.debug("language_id: rebuilding unreadable %s (%s)", path, exc)
    profiles = profiles_from_langdetect()
    if path is not None:
        try:
            _write_cache(path, profiles)
        except OSError as exc:
            log.debug("language_id: cannot cache profiles at %s (%s)", path, exc)
    return profiles


def profiles_from_langdetect() -> Profiles:
    """Load langdetect's profiles with its own factory (a private one, freed after converting)."""
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    table = factory.word_lang_prob_map
    n_langs = len(factory.langlist)
    matrix = np.fromiter(chain.from_iterable(table.values()), np.float64, count=len(table) * n_langs)
    return Profiles(tuple(factory.langlist), dict(zip(table, range(len(table)))),
                    matrix.reshape(len(table), n_langs))


def _cache_key() -> str:
    return f"{version('langdetect')}-{os.stat(PROFILES_DIRECTORY).st_mtime_ns}-{_CACHE_FORMAT}"


def _cache_path() -> Path | None:
    try:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "wiki2bert" / f"langdetect-profiles-{_cache_key()}.npz"
    except (OSError, RuntimeError, KeyError) as exc:   # no home, no profiles folder to stat
        log.debug("language_id: no cache for the profiles (%s)", exc)
        return None


def _read_cache(path: Path) -> Profiles:
    with np.load(path, allow_pickle=False) as data:
        if str(data["key"]) != _cache_key():
            raise ValueError("written for another langdetect")
        langs, words = data["langs"].tolist(), data["words"].tolist()
        matrix = np.zeros((len(words), len(langs)))
        matrix[data["row"], data["col"]] = data["value"]
    rows = dict(zip(words, range(len(words))))
    if len(rows) != len(words):
        raise ValueError("repeated n-grams")
    return Profiles(tuple(langs), rows, matrix)


def _write_cache(path: Path, profiles: Profiles) -> None:
    words = list(profiles.rows)
    stored_words = np.array(words, dtype=str)
    if stored_words.tolist() != words:   # numpy drops trailing NULs: such a profile is not cached
        return
    row, col = np.nonzero(profiles.matrix)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, key=np.array(_cache_key()), langs=np.array(profiles.langs), words=stored_words,
                 row=row.astype(np.int32), col=col.astype(np.int16), value=profiles.matrix[row, col])
