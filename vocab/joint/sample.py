"""The sample of a joint vocabulary: several languages' sentences, their shares smoothed by an
exponent, as mBERT (α 0.7) and XLM-R (α 0.3) sample their languages.

Language i has n_i sentences, p_i = n_i / Σ n_j of the text. Its share of the sample is
q_i = p_i^α / Σ_j p_j^α: α = 1 keeps the text's proportions, α = 0 gives every language the
same share, in between the small languages gain at the large ones' cost. Text is counted in
sentences (non-blank lines of the filter stage's output), the unit the sample is drawn in.

The sample holds N = min(sample_size, the sentences not held out) sentences, language i
exactly quota_i of them: N q_i rounded by largest remainders (ties to the earlier language), so the quotas sum to N.
Within a language the sentences are those with the smallest seeded keys (vocab/training/sample.py's
bottom-k sampling: independent of file order and of the number of workers), never one of the
held-out sentences. A language with fewer sentences than its quota (a small one that α lifts)
gives each of its s_i sentences quota_i // s_i times and those with the smallest keys once
more: its part is still exactly quota_i sentences, its words counted that often.

Each language's sentences are cut at its own word segmenter's words before BERT's split (ja
MeCab, th PyThaiNLP: vocab/training/words.py), so no piece crosses one of its words; the vocab
itself stays BERT's (one token per CJK character, BertTokenizerFast loads it).

Usage:
    shares = smoothed_shares({"uk": 9000, "vi": 1000}, alpha=0.3)   # {"uk": 0.66.., "vi": 0.33..}
    sample_quotas(shares, 5000)                                     # {"uk": 3327, "vi": 1673}
    info = draw_joint_sample(executor_map, [LanguageText("uk", files), ...], work, seed=12345,
                             sample_size=1_000_000, alpha=0.3)
    # work/sample.tsv (word counts), alphabet.json, eval_uk.txt ...; [sample.txt with keep_text]
"""
from __future__ import annotations

import functools
import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vocab.core.segmenters import CUTS_SAMPLE, SegmenterError
from vocab.training.sample import (
    EVAL_MAX_SENTENCES,
    SampleError,
    is_heldout_key,
    merge_smallest,
    read_sentences,
    scan_file,
    sentence_key,
    write_word_counts,
)
from vocab.training.words import BertWords


@dataclass(frozen=True)
class LanguageText:
    """One language's part of a joint vocab: its sentence files, its held-out sentences (empty:
    hold out a seeded 2% of its files instead) and the segmenter that cuts its words."""

    lang: str
    files: tuple[Path, ...]
    eval_sentences: tuple[str, ...] = ()
    segmenter: str | None = None

    @property
    def sample_words(self) -> str | None:
        """The segmenter whose words cut its sample (vocab.core.segmenters.CUTS_SAMPLE), or None."""
        return self.segmenter if self.segmenter in CUTS_SAMPLE else None


def smoothed_shares(sizes: Mapping[str, int], alpha: float) -> dict[str, float]:
    """q_i = p_i^α / Σ_j p_j^α with p_i = n_i / Σ n_j (a language without text gets 0)."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"the sampling exponent must be in [0, 1], got {alpha}")
    total = sum(sizes.values())
    if total <= 0:
        raise ValueError("no language has any text")
    weights = {k: (n / total) ** alpha if n > 0 else 0.0 for k, n in sizes.items()}
    z = sum(weights.values())
    return {k: w / z for k, w in weights.items()}


def text_shares(sizes: Mapping[str, int]) -> dict[str, float]:
    """p_i = n_i / Σ n_j (α = 1)."""
    return smoothed_shares(sizes, 1.0)


def sample_quotas(shares: Mapping[str, float], total: int) -> dict[str, int]:
    """total × each share, rounded by largest remainders so that they sum to `total` exactly
    (equal remainders: the language first in `shares` gets the sentence)."""
    exact = {k: s * total for k, s in shares.items()}
    quotas = {k: math.floor(v) for k, v in exact.items()}
    order = sorted(shares, key=lambda k: -(exact[k] - quotas[k]))   # stable: ties keep order
    for k in order[:total - sum(quotas.values())]:
        quotas[k] += 1
    return quotas


def draw_joint_sample(map_files: Callable[..., Iterable], languages: Sequence[LanguageText],
                      work: Path, *, seed: int, sample_size: int, alpha: float,
                      lower_case: bool = False, strip_accents: bool = False,
                      keep_text: bool = False) -> dict:
    """The joint sample (module doc) of `languages` (in the order given), on the stage's
    executor (`map_files(func, items, desc=, unit=)` yields func's results in order). Writes
    work/sample.tsv (word counts), work/alphabet.json (every language's characters),
    work/eval_{lang}.txt (each language's held-out sentences) and, with keep_text, work/sample.txt
    (the sampled sentences, each as often as it is counted: a byte-level BPE trains on it).
    Returns {"languages": {lang: figures}, "sample_sentences", "sample_words", ...}."""
    sizes, available = {}, {}
    for lt in languages:
        count = functools.partial(_count_job, seed=seed, hold_out=not lt.eval_sentences,
                                  exclude=_keys(lt.eval_sentences, seed))
        counts = list(map_files(count, list(lt.files), desc=f"joint-vocab: count {lt.lang}", unit="file"))
        sizes[lt.lang] = sum(n for n, _ in counts)
        available[lt.lang] = sum(a for _, a in counts)
    if not any(sizes.values()):
        raise SampleError("no language has any sentence to sample")
    p = text_shares(sizes)
    q = smoothed_shares(sizes, alpha)
    n_total = min(sample_size, sum(available.values()))
    quotas = sample_quotas(q, n_total)

    alphabet: set[str] = set()
    weighted_jobs: list[tuple[str, Path, list[tuple[int, int]], str | None]] = []
    figures: dict[str, dict] = {}
    for lt in languages:
        picked, heldout, held_total, letters = _scan_language(map_files, lt, seed, min(quotas[lt.lang],
                                                                                      sizes[lt.lang]))
        alphabet |= letters
        evals = list(lt.eval_sentences) if lt.eval_sentences else heldout
        (work / f"eval_{lt.lang}.txt").write_text("".join(s + "\n" for s in evals), encoding="utf-8")
        if quotas[lt.lang] and not picked:
            raise SampleError(f"{lt.lang}: all of its {sizes[lt.lang]:,} sentences are held out "
                              "for the report, none is left to sample: give it more text")
        jobs = _weighted_lines(picked, quotas[lt.lang])
        weighted_jobs += [(lt.lang, lt.files[fi], lines, lt.sample_words) for fi, lines in jobs]
        used = sum(w for _fi, lines in jobs for _li, w in lines)
        figures[lt.lang] = {
            "sentences": sizes[lt.lang], "available_sentences": available[lt.lang],
            "text_share": p[lt.lang], "sample_share": q[lt.lang],
            "sample_sentences": used, "distinct_sample_sentences": len(picked),
            "times_used": round(used / len(picked), 4) if picked else 0.0,
            "heldout_sentences": 0 if lt.eval_sentences else held_total,
            "eval_sentences": len(evals), **({"words_from": lt.segmenter} if lt.segmenter else {}),
        }

    counts: Counter = Counter()
    words_of: Counter = Counter()
    counter = functools.partial(_weighted_count_job, lower_case=lower_case, strip_accents=strip_accents)
    for (lang, *_rest), c in zip(weighted_jobs, map_files(counter, weighted_jobs,
                                                          desc="joint-vocab: split words", unit="file")):
        counts.update(c)
        words_of[lang] += sum(c.values())
    for lang, n in words_of.items():
        figures[lang]["sample_words"] = n
    if keep_text:
        with open(work / "sample.txt", "w", encoding="utf-8") as fh:
            for lines in map_files(_weighted_lines_job, weighted_jobs, desc="joint-vocab: sample text",
                                   unit="file"):
                fh.writelines(lines)
    distinct = write_word_counts(counts, work / "sample.tsv")
    with open(work / "alphabet.json", "w", encoding="utf-8") as fh:
        json.dump(sorted(alphabet), fh, ensure_ascii=False)
    return {"languages": figures, "sampling_alpha": alpha, "sentences": sum(sizes.values()),
            "sample_sentences": sum(f["sample_sentences"] for f in figures.values()),
            "sample_words": sum(counts.values()), "distinct_words": distinct,
            "alphabet": len(alphabet)}


def _scan_language(map_files, lt: LanguageText, seed: int, size: int):
    """(the sample's (key, file, line) by key, held-out sentences, held-out count, alphabet)."""
    scan = functools.partial(_scan_job, seed=seed, sample_size=size, hold_out=not lt.eval_sentences,
                             exclude=_keys(lt.eval_sentences, seed))
    sample: list = []
    heldout: list = []
    held_total = 0
    alphabet: set[str] = set()
    for res in map_files(scan, list(enumerate(lt.files)), desc=f"joint-vocab: scan {lt.lang}",
                         unit="file"):
        alphabet |= res.alphabet
        held_total += res.heldout_total
        sample = merge_smallest(sample, res.sample, size)
        heldout = merge_smallest(heldout, res.heldout, EVAL_MAX_SENTENCES)
    return sample, [c[3] for c in heldout], held_total, alphabet


def _weighted_lines(picked: list, quota: int) -> list[tuple[int, list[tuple[int, int]]]]:
    """[(file index, [(line, times), ...]), ...]: each picked sentence quota // len(picked)
    times, the first quota % len(picked) (smallest keys) once more; files and lines in order."""
    if not picked or not quota:
        return []
    times, extra = divmod(quota, len(picked))
    by_file: dict[int, list[tuple[int, int]]] = {}
    for rank, (_key, fi, li) in enumerate(picked):
        w = times + (rank < extra)
        if w:
            by_file.setdefault(fi, []).append((li, w))
    return [(fi, sorted(lines)) for fi, lines in sorted(by_file.items())]


def _keys(sentences, seed: int) -> frozenset[int]:
    return frozenset(sentence_key(s, seed) for s in sentences)


def _count_job(path: Path, seed: int, hold_out: bool, exclude: frozenset[int]) -> tuple[int, int]:
    """(sentences, those the sample may take: neither held out nor held-out text)."""
    n = free = 0
    try:
        for s in read_sentences(path):
            key = sentence_key(s, seed)
            n += 1
            free += not ((hold_out and is_heldout_key(key)) or key in exclude)
    except UnicodeDecodeError:
        raise SampleError(f"{path} is not UTF-8 text: give UTF-8 .txt files") from None
    return n, free


def _scan_job(item, **kw):
    index, path = item
    try:
        return scan_file(path, index, **kw)
    except UnicodeDecodeError:
        raise SampleError(f"{path} is not UTF-8 text: give UTF-8 .txt files") from None


def _picked_sentences(path: Path, lines: list[tuple[int, int]]) -> list[tuple[str, int]]:
    """(sentence, times) at the line indices of `lines` (read_sentences' numbering), in order."""
    times = dict(lines)
    return [(s, times[li]) for li, s in enumerate(read_sentences(path)) if li in times]


def _weighted_count_job(job, lower_case: bool, strip_accents: bool) -> Counter:
    """Word counts of a file's sampled sentences, each counted as often as it is used; a
    language's segmenter cuts its words first (the module doc)."""
    _lang, path, lines, segmenter = job
    by_times: dict[int, list[str]] = {}
    for s, w in _picked_sentences(path, lines):
        by_times.setdefault(w, []).append(s)
    words = BertWords(lower_case, strip_accents, cut_at=segmenter)
    total: Counter = Counter()
    for w, sentences in sorted(by_times.items()):
        try:
            c = words.count(sentences)
        except SegmenterError as exc:
            raise SegmenterError(f"{path}: {exc}") from None
        total.update({word: n * w for word, n in c.items()})
    return total


def _weighted_lines_job(job) -> list[str]:
    _lang, path, lines, _seg = job
    return [s + "\n" for s, w in _picked_sentences(path, lines) for _ in range(w)]


def joint_eval_sentences(work: str | os.PathLike, lang: str) -> list[str]:
    """The held-out sentences draw_joint_sample wrote for `lang`."""
    return list(read_sentences(Path(work) / f"eval_{lang}.txt"))
