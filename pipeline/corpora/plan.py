"""The web sources of one `pipeline ingest`: located and checked before anything is written,
then sliced and fetched into one job a file, each with what its task needs to read it.

Before the stage starts (`web_parts`): every --corpus and hf:// --source is located (an unknown
language, a corpus without the language, a gated or missing repository, the Hub unreachable:
one line), and offline, the files the slice needs must be cached (one line otherwise). Once the
stage runs (`web_jobs`): the slice is fetched file by file and verified (slicing.take), counted
where --max-tokens asks, and each file becomes a job with its token cap.

Usage:
    parts = web_parts("hu", corpora=["fineweb-2"], urls={}, roots={"": "/mirror"}, limits=limits)
    jobs = web_jobs(part, limits, min_score=0.8)      # [(local path, stem, WebRead)]
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from pathlib import Path

from pipeline.core.errors import StageError
from pipeline.text.corpus_files import check_file, read_records

from .hub import OFFLINE_HINT
from .locate import CorpusPart, locate, locate_url
from .named import parse_corpus
from .options import Limits, WebRead
from .slicing import by_size, select, take


def web_parts(lang: str, corpora, urls: dict, roots: dict, text_field: str = "text",
              formats: dict | None = None, limits: Limits | None = None) -> list[CorpusPart]:
    """Every web source located (urls first, then corpora, the order of dedup's priority), and
    offline, the files its slice needs found in the cache: one StageError line otherwise."""
    names = [*urls, *(parse_corpus(c)[0] for c in corpora)]
    _check_roots(roots, names)
    formats = formats or {}
    parts = [locate_url(n, spec, roots.get(n, roots.get("")), text_field, formats.get(n) or formats.get(""))
             for n, spec in urls.items()]
    parts += [locate(lang, c, roots.get(parse_corpus(c)[0], roots.get(""))) for c in corpora]
    seen = set()
    for part in parts:
        if part.source in seen:
            raise StageError(f"the source {part.source!r} is given twice: give each corpus once")
        seen.add(part.source)
        if part.repo.where == "cache":
            _check_cached(part, *(limits or Limits({}, {})).of(part.source))
    return parts


def _check_roots(roots: dict, names: list[str]) -> None:
    if "" in roots and len(names) > 1:
        raise StageError("--corpus-root DIR is the copy of one repository, and this ingest has "
                         f"{len(names)} web sources: give NAME=DIR for each ({', '.join(names)})")
    unknown = sorted(set(roots) - set(names) - {""})
    if unknown:
        raise StageError(f"--corpus-root {', '.join(unknown)}: not a web source of this ingest "
                         f"({', '.join(names) or 'none'})")


def _check_cached(part: CorpusPart, max_tokens: int | None, max_bytes: float | None) -> None:
    """Offline: the slice's files must be cached (with --max-tokens, at least its first file; a
    later one missing is found when the slice is counted, still before a task writes)."""
    needed = by_size(part.files, max_bytes) if max_bytes is not None else part.files
    missing = part.repo.missing(needed[:1] if max_tokens is not None else needed)
    if missing:
        raise StageError(f"{part.title} ({part.repo.repo}, {part.language or 'its files'}): "
                         f"{len(missing)} of the {len(needed)} files it needs are not in the Hugging Face "
                         f"cache (first: {missing[0].path}) and HF_HUB_OFFLINE is set: {OFFLINE_HINT}")


def fingerprint(parts: list[CorpusPart]) -> str:
    """What the web sources are, without reading them: repository, commit, files and sizes."""
    h = hashlib.sha256()
    for part in parts:
        h.update(f"{part.source}\0{part.repo.repo}\0{part.repo.commit}\0{part.language}\n".encode())
        for f in part.files:
            h.update(f"{f.path}\0{f.size}\n".encode())
    return h.hexdigest()[:16]


def reader(part: CorpusPart, min_score: float | None) -> WebRead:
    if min_score is not None and part.score_column is None:
        raise StageError(f"--min-language-score: {part.title} has no language score column: leave "
                         "the option out for it")
    return WebRead(part.text_column, part.kept, part.score_column, min_score, web=True)


def count_tokens(path: Path, fmt: str, read: WebRead, cap: int | None) -> int:
    """The estimated tokens ingest will take of `path` (slicing.select's rule, `cap` at most)."""
    records = read_records(path, fmt, Counter(), read.field, columns=(read.score_column,) if read.score_column else ())
    return sum(t for *_, t in select(records, Counter(), read.score_column, read.min_score, cap))


def web_jobs(part: CorpusPart, limits: Limits, min_score: float | None) -> list[tuple[Path, str, WebRead]]:
    """(local file, its output stem, how to read it) of the slice, fetched and verified in order."""
    read = reader(part, min_score)
    max_tokens, max_bytes = limits.of(part.source)
    checked: set[Path] = set()

    def count(path: Path, cap: int | None) -> int:
        _check(path, part, read, checked)
        return count_tokens(path, part.fmt, read, cap)

    out = []
    for f, path, cap in take(part.repo, part.files, count, max_tokens, max_bytes, desc=f"fetch {part.source}"):
        _check(path, part, read, checked)
        stem = f.path.rsplit(".", 2 if f.path.endswith((".gz", ".zst", ".xz", ".bz2")) else 1)[0]
        out.append((path, stem.replace("/", "_"), replace(read, cap=cap)))
    return out


def _check(path: Path, part: CorpusPart, read: WebRead, checked: set) -> None:
    if path not in checked:
        check_file(path, part.fmt, read.field)
        checked.add(path)
