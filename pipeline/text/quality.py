"""Corpus quality measures: what is wrong in a language's text stages' output, as numbers.

Each measure counts lines of `filtered/` (or documents) that a BERT corpus should not hold:
leftover wiki markup, list bullets, JSON, navigation-box pipes, footnote marks, empty or
dangling brackets, brackets or quotes that do not balance, one-sentence documents, lines
that repeat an earlier line; and long articles of `formatted/` whose text never reached
`filtered/`. `bench/bench_text_quality.py` prints them per language, `pipeline report` shows
them; the goals are the issue's (a line measure "per10k" is per 10,000 lines).

Usage:
    result = measure_corpus(Path("data/uk"))
    result["measures"]["unbalanced"], result["examples"]["markup"][:3]
    for m in MEASURES: print(m.label, result["measures"][m.key], m.goal)

Reading is bounded by `max_bytes` per folder (the first files in name order), so a whole
Wikipedia is measured on a sample of the same files whatever its size.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .brackets import unbalanced
from .documents import documents, read_utf8


@dataclass(frozen=True)
class Measure:
    key: str
    label: str
    unit: str        # "share" (0..1 of lines or documents) or "per10k" (lines per 10,000)
    goal: float
    worse: str = "above"


MEASURES = [
    Measure("long_articles_lost", "long articles lost (formatted ≥ 2,000 chars, not in filtered)", "share", 0.01),
    Measure("markup", "lines with wiki markup", "per10k", 5),
    Measure("bullet", "lines starting with a list bullet", "per10k", 5),
    Measure("json", "lines of JSON or chart data", "per10k", 5),
    Measure("navbox", "lines with navigation-box separators", "per10k", 5),
    Measure("footnote", "lines with a footnote mark [N]", "per10k", 5),
    Measure("empty_bracket", "lines with an empty or dangling bracket", "per10k", 5),
    Measure("unbalanced", "lines whose brackets or quotes do not balance", "share", 0.003),
    Measure("one_sentence_docs", "one-sentence documents", "share", 0.05),
    Measure("repeated_lines", "lines (> 20 chars) repeating an earlier line", "share", 0.01),
]

# What each line measure looks for (a line may count under several).
LINE_PATTERNS = {
    "markup": re.compile(r"\[\[|\]\]|\{\{|\}\}|\{\||\|\}|''|</?[a-zA-Z]+[ >/]|&[a-z]+;|==|__[A-Z]+__"
                         r"|\[https?:|\b(?:thumb|px)\|"),
    "bullet": re.compile(r"^\s*(?:[*#•▪◦●■□►▸‣⁃]|[:;]\s)"),
    "json": re.compile(r"^\s*[{\[]\s*\"|^\s*\"[^\"]{1,40}\"\s*:\s*[-\d\"\[{tfn]|^\s*[\]}],?\s*$"),
    "navbox": re.compile(r" \| |(?:\S[^·•]{0,30} [·•] ){2,}"),
    "footnote": re.compile(r"\[\s*(?:\d{1,3}|[a-z]|[a-z]{1,6}\.? ?\d{1,3})\s*\]"),
    "empty_bracket": re.compile(
        r"\(\s*\)|（\s*）|「\s*」|『\s*』|【\s*】|〔\s*〕|《\s*》|〈\s*〉|\[\s*\]|«\s*»|“\s*”|„\s*[“”]"
        r"|[(（「『【\[«“„]\s*[,，、;；:：]|[,，、;；]\s*[)）」』】\]»”]"),
}
MIN_REPEAT_CHARS = 20
LONG_ARTICLE_CHARS = 2000


def line_hash(line: str) -> bytes:
    return hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest()


def _text_files(folder: Path, max_bytes: int) -> Iterator[Path]:
    total = 0
    for path in sorted(folder.glob("*.txt")):
        if path.name.endswith(".reasons.txt"):
            continue
        if total >= max_bytes:
            return
        total += path.stat().st_size
        yield path


def _docs(folder: Path, max_bytes: int) -> Iterator[list[str]]:
    for path in _text_files(folder, max_bytes):
        yield from documents(read_utf8(path))


def line_measures(folder: Path, max_bytes: int = 200_000_000, n_examples: int = 5) -> dict:
    """The line and document measures of a text folder (`filtered/`)."""
    counts = dict.fromkeys(LINE_PATTERNS, 0)
    counts["unbalanced"] = 0
    examples: dict[str, list[str]] = {k: [] for k in (*counts, "repeated_lines", "one_sentence_docs")}
    lines = docs = one_sentence = long_lines = repeated = 0
    seen: set[bytes] = set()

    def example(key: str, line: str) -> None:
        if len(examples[key]) < n_examples:
            examples[key].append(line[:300])

    for doc in _docs(folder, max_bytes):
        docs += 1
        if len(doc) == 1:
            one_sentence += 1
            example("one_sentence_docs", doc[0])
        for line in doc:
            lines += 1
            for key, pattern in LINE_PATTERNS.items():
                if pattern.search(line):
                    counts[key] += 1
                    example(key, line)
            if unbalanced(line):
                counts["unbalanced"] += 1
                example("unbalanced", line)
            if len(line) > MIN_REPEAT_CHARS:
                long_lines += 1
                h = line_hash(line)
                if h in seen:
                    repeated += 1
                    example("repeated_lines", line)
                else:
                    seen.add(h)
    measures = {k: (v / lines * 10_000 if lines else 0.0) for k, v in counts.items() if k != "unbalanced"}
    measures["unbalanced"] = counts["unbalanced"] / lines if lines else 0.0
    measures["one_sentence_docs"] = one_sentence / docs if docs else 0.0
    measures["repeated_lines"] = repeated / long_lines if long_lines else 0.0
    return {"lines": lines, "documents": docs, "measures": measures, "examples": examples}


def _middle_piece(doc: list[str], seen: set[bytes]) -> str | None:
    """A piece from the middle of a long document's own text (its lines that no earlier
    document has: boilerplate copied between articles is not the article's), or None when its
    own text is under LONG_ARTICLE_CHARS: the longest own line in the middle third; 40
    characters from that line's middle, whitespace removed (splitting cannot hide it)."""
    own = []
    for line in doc:
        h = line_hash(line)
        if h not in seen:
            seen.add(h)
            own.append(line)
    if sum(map(len, own)) < LONG_ARTICLE_CHARS:
        return None
    third = len(own) // 3
    middle = own[third:len(own) - third] or own
    line = "".join(max(middle, key=len).split())
    if len(line) < 20:
        return None
    start = max(0, len(line) // 2 - 20)
    return line[start:start + 40]


def long_articles_lost(formatted: Path, filtered: Path, max_bytes: int = 200_000_000,
                       n_examples: int = 5, sentences: Path | None = None) -> tuple[float, int, list[str]]:
    """(share lost, long articles seen, examples): of the formatted documents with at least
    LONG_ARTICLE_CHARS characters of their own text (sentences copied from an earlier document
    do not count: a year article that is boilerplate around two lines of its own is not a long
    article), those whose middle piece is nowhere in `filtered/`.

    The text stages keep file names and, up to filter, every document in order: formatted
    document k of a file is sentences/ document k of the same file (when `sentences` is given,
    pieces are whole sentences, so that a paragraph copied between articles with one word
    changed is still recognised as copied); each file is compared with its own filtered file."""
    lost = seen = 0
    examples: list[str] = []
    lines_seen: set[bytes] = set()
    for path in _text_files(formatted, max_bytes):
        split_path = sentences / path.name if sentences is not None else None
        split_docs = documents(read_utf8(split_path)) if split_path and split_path.is_file() else None
        pieces = []
        for doc in documents(read_utf8(path)):
            units = next(split_docs, doc) if split_docs is not None else doc
            if sum(map(len, doc)) < LONG_ARTICLE_CHARS:
                lines_seen.update(map(line_hash, units))
            else:
                piece = _middle_piece(units, lines_seen)
                if piece:
                    pieces.append((piece, doc[0]))
        if not pieces:
            continue
        out = filtered / path.name
        kept = "".join(read_utf8(out).split()) if out.is_file() else ""
        for piece, first in pieces:
            seen += 1
            if piece not in kept:
                lost += 1
                if len(examples) < n_examples:
                    examples.append(first[:300])
    return (lost / seen if seen else 0.0), seen, examples


def measure_corpus(lang_dir: str | Path, max_bytes: int = 200_000_000) -> dict:
    """Every measure of MEASURES for DATA_DIR/LANG (see the module docstring)."""
    lang_dir = Path(lang_dir)
    filtered = lang_dir / "filtered"
    result = line_measures(filtered, max_bytes) if filtered.is_dir() else {
        "lines": 0, "documents": 0, "measures": {}, "examples": {}}
    formatted = lang_dir / "formatted"
    if (lang_dir / "deduped" / "manifest.json").is_file():   # split read the deduplicated mix
        formatted = lang_dir / "deduped"
    if formatted.is_dir() and filtered.is_dir():
        sentences = lang_dir / "sentences"
        share, seen, examples = long_articles_lost(formatted, filtered, max_bytes,
                                                   sentences=sentences if sentences.is_dir() else None)
        result["measures"]["long_articles_lost"] = share
        result["long_articles"] = seen
        result["examples"]["long_articles_lost"] = examples
    return result


def failing(measures: dict) -> list[Measure]:
    """The measures of MEASURES that miss their goal."""
    out = []
    for m in MEASURES:
        value = measures.get(m.key)
        if value is not None and (value > m.goal if m.worse == "above" else value < m.goal):
            out.append(m)
    return out
