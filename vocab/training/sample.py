"""Seeded sampling of sentences and BERT's word split, for sentencepiece training.

sentencepiece's own sampling (`input_sentence_size` + shuffling) differs from run to run even
with its seed, so the sample is drawn here: every sentence gets a key, a keyed hash of its
text and the seed; sentences whose key falls below HELDOUT_FRACTION are held out for the
quality report, and the training sample is the `sample_size` smallest keys of the rest
("bottom-k" sampling: uniform, streaming, and independent of file order and of the number of
worker processes). Duplicated sentences share a key, so a held-out sentence never has a twin
in the training sample.

The sample is then split into words the way BERT's basic tokenizer splits (normaliser with the
case setting, then whitespace / punctuation / CJK characters), and sentencepiece is trained on
the word counts (`word<TAB>count`), so no piece can ever cross a split that WordPiece makes.

The sample travels as keys and positions (key, file index, line index), never as text: each
file's chosen lines are read and counted where the file is (count_sample_words), so a cluster
moves paths and numbers, and the client holds 1M small tuples, not 1M sentences.

Usage:
    info = draw_sample(executor_map, files, work, seed=12345, sample_size=1_000_000,
                       hold_out=True, eval_sentences=[])   # all of it: work/sample.tsv, ...
    # its parts:
    res = scan_file(path, file_index=0, seed=12345, sample_size=1_000_000)
    sample = merge_smallest(sample, res.sample, 1_000_000)          # over the files
    counts = count_sample_words(path, [li for _k, fi, li in sample if fi == 0])
    write_word_counts(counts, "sample.tsv")
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import heapq
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vocab.core.normalizer import alphabet_of
from vocab.core.segmenters import SegmenterError
from vocab.training.words import BertWords

BERT_WORDS = BertWords()   # cased, accents kept, BERT's split alone
# Share of the input held out from training for the report when no test text is given.
HELDOUT_FRACTION = 0.02
# Held-out sentences actually scored (the smallest keys): plenty for a 0.01% resolution.
EVAL_MAX_SENTENCES = 20_000

_KEY_SPACE = 1 << 64

# A candidate sentence: (key, file index, line index, text); tuples sort by key, then position.
Candidate = tuple[int, int, int, str]
# A sample member: (key, file index, line index), the same order without the text.
SampleKey = tuple[int, int, int]


def sentence_key(text: str, seed: int) -> int:
    """A 64-bit keyed hash of a sentence: the same text and seed give the same key anywhere."""
    h = hashlib.blake2b(text.encode("utf-8"), digest_size=8,
                        key=str(int(seed)).encode("ascii"), person=b"wiki2bert-vocab")
    return int.from_bytes(h.digest(), "big")


def is_heldout_key(key: int) -> bool:
    return key < HELDOUT_FRACTION * _KEY_SPACE


def read_sentences(path: str | os.PathLike) -> Iterator[str]:
    """The non-blank lines of a UTF-8 text file (one sentence a line), stripped."""
    with open(path, encoding="utf-8") as fh:
        try:
            for line in fh:
                line = line.strip()
                if line:
                    yield line
        except OSError as exc:   # a failing disk: the Error line names the file
            exc.filename = exc.filename or str(path)
            raise


@dataclass
class ScanResult:
    """What one pass over one input file found."""

    sentences: int = 0
    alphabet: set[str] = field(default_factory=set)
    sample: list[SampleKey] = field(default_factory=list)   # sorted, at most sample_size
    heldout: list[Candidate] = field(default_factory=list)  # sorted, at most EVAL_MAX_SENTENCES
    heldout_total: int = 0


def scan_file(path: str | os.PathLike, file_index: int, seed: int, sample_size: int,
              hold_out: bool = True, exclude: frozenset[int] = frozenset(),
              words=BERT_WORDS) -> ScanResult:
    """One streaming pass over a file: its alphabet (each character as `words` normalises it:
    the case setting; NFKC for a MeCab vocab), its best sample candidates, and (with hold_out)
    its held-out sentences. Sentences whose key is in `exclude` (the evaluation text) are kept
    out of the sample."""
    res = ScanResult()
    sample_heap: list[tuple[int, int]] = []   # max-heap by (-key, -line)
    held: list[Candidate] = []

    # The alphabet pass pulls the lines; the keys are computed as they stream past.
    def keyed() -> Iterator[str]:
        for li, s in enumerate(read_sentences(path)):
            key = sentence_key(s, seed)
            res.sentences += 1
            if hold_out and is_heldout_key(key):
                res.heldout_total += 1
                held.append((key, file_index, li, s))
            elif key not in exclude and sample_size > 0:
                item = (-key, -li)
                if len(sample_heap) < sample_size:
                    heapq.heappush(sample_heap, item)
                elif item > sample_heap[0]:
                    heapq.heapreplace(sample_heap, item)
            yield s

    res.alphabet = alphabet_of(keyed(), words.char_normalizer())
    res.sample = sorted((-k, file_index, -li) for k, li in sample_heap)
    res.heldout = heapq.nsmallest(EVAL_MAX_SENTENCES, held)
    return res


def merge_smallest(a: Sequence, b: Sequence, n: int) -> list:
    """The n smallest of two sorted lists (candidates or sample keys), sorted. Once `a` is
    full, only the part of `b` below its largest item can enter (most files add little)."""
    if len(a) >= n and b:
        b = b[:bisect.bisect_left(b, a[n - 1])]
        if not b:
            return list(a[:n])
    return sorted([*a, *b])[:n]   # Timsort merges the two runs


def write_word_counts(counts: Counter, path: str | os.PathLike) -> int:
    """Write `word<TAB>count` lines (most frequent first, ties by word) for sentencepiece's
    tsv input; return the number of distinct words."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    with open(path, "w", encoding="utf-8") as fh:
        for word, n in items:
            fh.write(f"{word}\t{n}\n")
    return len(items)


def count_sample_words(path: str | os.PathLike, lines: Sequence[int], words=BERT_WORDS) -> Counter:
    """Word counts (`words.count`) of the sentences of `path` at the line indices `lines` (as
    read_sentences numbers them: non-blank lines from 0)."""
    wanted = set(lines)
    return words.count(s for li, s in enumerate(read_sentences(path)) if li in wanted)


class SampleError(ValueError):
    """An input file the sample cannot be read from (not UTF-8 text); the message names it."""


def pick_eval_sentences(files: Sequence[str | os.PathLike], seed: int) -> list[str]:
    """Up to EVAL_MAX_SENTENCES sentences of the eval files, a seeded choice (streaming)."""
    keyed = ((sentence_key(s, seed), fi, li, s) for fi, f in enumerate(files)
             for li, s in enumerate(read_sentences(f)))
    return [c[3] for c in heapq.nsmallest(EVAL_MAX_SENTENCES, keyed)]


def draw_sample(map_files: Callable[..., Iterable], files: Sequence[Path], work: Path, *, seed: int,
                sample_size: int, hold_out: bool, eval_sentences: list[str], words=BERT_WORDS,
                keep_text: bool = False) -> dict:
    """The full pass over `files` (alphabet, sample and, with `hold_out`, the held-out slice),
    then the sample's word counts (`words`: what the kind trains on, vocab/training/words.py);
    writes work/sample.tsv, eval.txt (the held-out sentences
    or `eval_sentences`) and alphabet.json, and returns the counts. `map_files(func, items,
    desc=, unit=)` runs func over items and yields the results in order: the stage's executor.
    With `keep_text`, also work/sample.txt: the sample's sentences themselves, in file and
    line order (what a byte-level BPE trains on, vocab/training/bytelevel.py)."""
    exclude = frozenset(sentence_key(s, seed) for s in eval_sentences)
    scan = functools.partial(_scan_job, seed=seed, sample_size=sample_size, hold_out=hold_out,
                             exclude=exclude, words=words)
    alphabet: set[str] = set()
    sample: list = []
    heldout: list = []
    sentences = heldout_total = 0
    for res in map_files(scan, list(enumerate(files)), desc="vocab: scan", unit="file"):
        sentences += res.sentences
        heldout_total += res.heldout_total
        alphabet |= res.alphabet
        sample = merge_smallest(sample, res.sample, sample_size)
        heldout = merge_smallest(heldout, res.heldout, EVAL_MAX_SENTENCES)
    if hold_out:
        eval_sentences = [c[3] for c in heldout]
    del heldout
    # Word counts of the sample, one job per file that holds some of it: the job gets the
    # file's path and line numbers and reads the sentences there (no text in the task graph).
    lines_by_file: dict[int, list[int]] = {}
    for _key, fi, li in sample:
        lines_by_file.setdefault(fi, []).append(li)
    jobs = [(files[fi], sorted(lines)) for fi, lines in sorted(lines_by_file.items())]
    n_sample = len(sample)
    del sample, lines_by_file
    counts: Counter = Counter()
    count = functools.partial(_count_job, words=words)
    for c in map_files(count, jobs, desc="vocab: split words", unit="file"):
        counts.update(c)
    if keep_text:
        with open(work / "sample.txt", "w", encoding="utf-8") as fh:
            for lines in map_files(_lines_job, jobs, desc="vocab: sample text", unit="file"):
                fh.writelines(s + "\n" for s in lines)
    distinct = write_word_counts(counts, work / "sample.tsv")
    with open(work / "eval.txt", "w", encoding="utf-8") as fh:
        fh.writelines(s + "\n" for s in eval_sentences)
    with open(work / "alphabet.json", "w", encoding="utf-8") as fh:
        json.dump(sorted(alphabet), fh, ensure_ascii=False)
    return {"sentences": sentences, "sample_sentences": n_sample,
            "sample_words": sum(counts.values()), "distinct_words": distinct,
            "heldout_sentences": heldout_total if hold_out else 0,
            "eval_sentences": len(eval_sentences), "alphabet": len(alphabet)}


def _scan_job(item: tuple[int, Path], **kw) -> ScanResult:
    index, path = item
    try:
        return scan_file(path, index, **kw)
    except UnicodeDecodeError:
        raise SampleError(f"{path} is not UTF-8 text: give UTF-8 .txt files") from None


def _lines_job(job: tuple[Path, list[int]]) -> list[str]:
    """The sentences of a file at the line indices of the sample (read_sentences' numbering)."""
    path, lines = job
    wanted = set(lines)
    return [s for li, s in enumerate(read_sentences(path)) if li in wanted]


def _count_job(job: tuple[Path, list[int]], **kw) -> Counter:
    path, lines = job
    try:
        return count_sample_words(path, lines, **kw)
    except SegmenterError as exc:
        raise SegmenterError(f"{path}: {exc}") from None
