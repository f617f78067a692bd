"""The slice of a language's part that a run takes, and the documents ingest keeps of a file.

  --max-gb G      the part's files in the corpus's order while their download size stays within
                  G GB (at least the first file: the Hub serves whole files).
  --max-tokens N  the part's documents in the corpus's order until their text holds N estimated
                  tokens (tokens.py): files are fetched one after another and counted, stopping
                  at the file that reaches N; each file's cap is what is left of N before it, so
                  ingest's tasks, which run in any order, stop at the same document as this count.
  --min-language-score S  only documents whose score column (FineWeb-2's language_score) is at
                  least S count and are kept.

`select` is the one rule both sides apply: the count here and the task that writes the text.

Usage:
    for paragraphs, meta, tokens in select(records, stats, "language_score", 0.8, cap=10_000): ...
    by_size(files, max_bytes=2e9)                         # the first files within 2 GB
    take(repo, files, counter, max_tokens=1e9)            # [(RemoteFile, local path, cap)]
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core.report import progress

from .tokens import estimate_tokens

if TYPE_CHECKING:   # types only: the ingest task's `select` needs no huggingface_hub
    from .hub import RemoteFile, Repo


def select(records: Iterable[tuple[list[str], dict]], stats: Counter, score_column: str | None = None,
           min_score: float | None = None, cap: int | None = None) -> Iterator[tuple[list[str], dict, int]]:
    """(paragraphs, meta, estimated tokens) of the records a slice keeps: those whose score is at
    least `min_score`, until `cap` tokens (the record reaching it is the last; reading stops)."""
    total = 0
    for paragraphs, meta in records:
        if min_score is not None:
            score = meta.get(score_column)
            if score is None or score < min_score:
                stats["below_min_language_score"] += 1
                continue
        if cap is not None and total >= cap:
            stats["past_max_tokens"] += 1
            return
        tokens = estimate_tokens("\n".join(paragraphs))
        total += tokens
        yield paragraphs, meta, tokens


def by_size(files: list[RemoteFile], max_bytes: float) -> list[RemoteFile]:
    """The first files whose sizes add up to at most `max_bytes` (at least one)."""
    out, total = [], 0
    for f in files:
        if out and total + f.size > max_bytes:
            break
        out.append(f)
        total += f.size
    return out


def take(repo: Repo, files: list[RemoteFile], count: Callable[[Path, int | None], int],
         max_tokens: int | None = None, max_bytes: float | None = None,
         desc: str = "fetch") -> list[tuple[RemoteFile, Path, int | None]]:
    """(file, local path, token cap) of the slice: each file fetched and verified in order
    (repo.local_path), and with `max_tokens` counted by `count(path, cap)` until the slice holds
    them. A cut run keeps what it fetched: a rerun finds those files cached and goes on."""
    chosen = by_size(files, max_bytes) if max_bytes is not None else files
    out: list[tuple[RemoteFile, Path, int | None]] = []
    left = max_tokens
    bar = progress(total=sum(f.size for f in chosen) if max_tokens is None else None, desc=desc,
                   unit="B", unit_scale=True, disable=len(chosen) <= 1)
    with bar:
        for f in chosen:
            path = repo.local_path(f)
            bar.update(f.size)
            out.append((f, path, left))
            if left is not None:
                left -= count(path, left)
                if left <= 0:
                    break
    return out
