"""What ingest's options say about its web sources, and how a task reads a web source's file:
the light half of pipeline/corpora (no huggingface_hub, langcodes or pyarrow), which the ingest
stage imports whatever it reads; plan.py, which asks the Hub, loads only for web sources.

Usage:
    parse_hf_url("hf://datasets/ORG/REPO@v2/data/*.parquet")   # ("ORG/REPO", "v2", "data/*.parquet")
    limits = Limits(parse_per_source(["1e9"], "--max-tokens", int), parse_per_source([], "--max-gb"))
    limits.of("fineweb-2")                                     # (1000000000, None)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.core.errors import StageError

GB = 1e9
_HF_URL = re.compile(r"^hf://datasets/(?P<repo>[^/@]+/[^/@]+)(?:@(?P<rev>[^/]+))?/(?P<glob>.+)$")


def parse_hf_url(spec: str) -> tuple[str, str | None, str] | None:
    """(repo, revision or None, glob) of `hf://datasets/ORG/REPO[@REV]/GLOB`; None for a local path."""
    if not spec.startswith("hf://"):
        return None
    m = _HF_URL.match(spec)
    if not m:
        raise StageError(f"{spec}: a Hub source is hf://datasets/ORG/REPO/GLOB (or ORG/REPO@REVISION/"
                         "GLOB), e.g. hf://datasets/HuggingFaceFW/fineweb-2/data/hun_Latn/train/*.parquet")
    return m["repo"], m["rev"], m["glob"]


def is_hub(spec: str) -> bool:
    return parse_hf_url(spec) is not None


@dataclass(frozen=True)
class WebRead:
    """How a task reads one file of a web source (pipeline/stages/ingest.py's ingest_file)."""

    field: str
    columns: tuple[str, ...] = ()       # the corpus's columns kept per document (metadata.py)
    score_column: str | None = None
    min_score: float | None = None
    cap: int | None = None              # stop after this many estimated tokens (--max-tokens)
    web: bool = False                   # write the metadata beside each part (metadata.py)


@dataclass(frozen=True)
class Limits:
    """--max-tokens and --max-gb: {source: value}, "" for every web source."""

    tokens: dict
    gb: dict

    def of(self, source: str) -> tuple[int | None, float | None]:
        tokens, gb = self.tokens.get(source, self.tokens.get("")), self.gb.get(source, self.gb.get(""))
        return (int(tokens) if tokens is not None else None), (gb * GB if gb is not None else None)


def parse_per_source(values, option: str, cast=float) -> dict:
    """`V` (every web source) or `NAME=V`, repeatable: {"": V, NAME: V}; V > 0."""
    out = {}
    for value in values or ():
        name, _, v = str(value).rpartition("=")
        try:
            number = cast(float(v))
        except ValueError:
            number = 0
        if number <= 0:
            raise StageError(f"{option} {value}: a number above 0 (or NAME=NUMBER for one source)")
        out[name] = number
    return out
