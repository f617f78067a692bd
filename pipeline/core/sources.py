"""Named sources of one corpus: Wikipedia (the dump) and the corpora `pipeline ingest` brings.

A document's source travels in the name of the file that holds it: `ingest` and `dedup` write
`SOURCE__NAME.txt`, split and filter keep file names, and shard counts documents per source
from them (a file without `__` holds Wikipedia, as format writes it). No field is added to the
text files, so split, filter and vocab run unchanged.

Usage:
    parse_pairs(["web=/data/cc100.txt.xz"], "--source")   # {"web": "/data/cc100.txt.xz"}
    parse_weights(["web=0.5"])                            # {"web": 0.5}
    source_of("web__cc100_0000.txt")                      # "web"
    source_file_name("web", "cc100_0000.txt")             # "web__cc100_0000.txt"
"""
from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

from .errors import StageError
from .manifest import read_manifest

WIKIPEDIA = "wikipedia"   # the dump's documents; a name no other source may take
SEP = "__"
_NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$")


def validate_source_name(name: str) -> str:
    if not _NAME_RE.match(name or "") or name.endswith("_") or len(name) > 40:
        raise StageError(f"source name {name!r} is not a simple name: use letters, digits, '-' "
                         "and single '_' (e.g. web, cc100, news-hu)")
    return name


def parse_pairs(values, option: str, reserved: tuple[str, ...] = (WIKIPEDIA,)) -> dict[str, str]:
    """`NAME=VALUE` strings into an ordered dict; StageError for a bad form or a name given twice."""
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not rest:
            raise StageError(f"{option} {value!r} is not NAME=VALUE (e.g. {option} web=cc100.txt.xz)")
        name = validate_source_name(name.strip())
        if name in reserved:
            raise StageError(f"{option} {value!r}: the name {name!r} is reserved for the dump's "
                             "documents; call the source something else")
        if name in pairs:
            raise StageError(f"{option}: the source {name!r} is given twice: give each source once "
                             "(a folder or a glob brings several files)")
        pairs[name] = rest.strip()
    return pairs


def parse_weights(values) -> dict[str, float]:
    """`NAME=W` into {name: weight}: W ≥ 0, 2 repeats a source's training documents twice, 0.5
    keeps about half of them (the held-out ones are never repeated or dropped)."""
    weights = {}
    for name, w in parse_pairs(values, "--weight", reserved=()).items():
        try:
            weight = float(w)
        except ValueError:
            weight = -1.0
        if not (weight >= 0 and math.isfinite(weight)):
            raise StageError(f"--weight {name}={w}: a weight is a number ≥ 0 (2 repeats the "
                             "source twice, 0.5 keeps half of it)")
        weights[name] = weight
    return weights


def source_of(file_name: str) -> str:
    """The source of the documents in a text file of the pipeline, from its name."""
    name = Path(file_name).name
    return name.split(SEP, 1)[0] if SEP in name else WIKIPEDIA


def source_file_name(source: str, name: str) -> str:
    return name if SEP in name and source_of(name) == source else f"{source}{SEP}{name}"


def plain(counts: dict) -> dict:
    """Nested counters as sorted plain dicts (for a manifest)."""
    return {k: dict(sorted(v.items())) for k, v in sorted(counts.items())}


def shard_sources(shard_dir: str | Path, shard_files) -> dict:
    """{source: {"training_documents": n, "test_documents": n, "training_bytes": n, "test_bytes": n,
    "weight": w}} of `shard_files`, from the shard stage's manifest in `shard_dir` ({} when it has
    no per-source counts; bytes only where it counted them)."""
    manifest = read_manifest(shard_dir) or {}
    names = {Path(f).name for f in shard_files}
    totals: dict[str, Counter] = {}
    for row in manifest.get("shards", []):
        if row.get("file") in names:
            for source, n in (row.get("sources") or {}).items():
                totals.setdefault(source, Counter())[f"{row['split']}_documents"] += n
            for source, n in (row.get("source_bytes") or {}).items():
                totals[source][f"{row['split']}_bytes"] += n
    weights = ((manifest.get("options") or {}).get("weights") or {})
    return {k: {**v, "weight": float(weights.get(k, 1.0))} for k, v in plain(totals).items()}
