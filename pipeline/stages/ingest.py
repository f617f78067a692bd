"""`pipeline ingest`: other corpora than Wikipedia into the text stages' format.

Each `--source NAME=PATH` (repeatable; PATH a file, a folder or a glob) is read in its format
(text, JSONL or Parquet, from the file name or --format; compressed .gz/.bz2/.xz/.zst;
pipeline/text/corpus_files.py), cleaned as Wikipedia's text is where that applies (NFC,
control characters, whitespace), and written as `formatted/` is written: one paragraph per
line, a blank line between documents, into DATA_DIR/LANG/ingested/NAME__FILE_PPPP.txt, parts of
at most --part-mb each (the later stages read a file at a time). The source's name travels in
the file names through dedup, split and filter to the shards (pipeline/core/sources.py).

One task per input file, on the executor (local pool or Dask), streamed in bounded memory;
resumable (a finished file is skipped) and deterministic. Bad input: a file that is not its
format, a JSONL or Parquet without the text field, an empty source or a name given twice is
one `Error:` line before anything is written; lines that are not UTF-8, records without the
field and cut documents are counted per source, in the manifest and as a warning.

Web sources (pipeline/corpora/): `--corpus NAME` is the run's language's part of a named web
corpus (FineWeb-2 first), `--source NAME=hf://datasets/ORG/REPO/GLOB` any Hub dataset; both
are fetched through huggingface_hub into its cache (or read from --corpus-root, a local copy of
the repository), verified, sliced (--max-tokens, --max-gb, --min-language-score), and written
as above with the corpus's own columns per document beside each part (NAME__FILE_PPPP.meta.parquet);
where they came from and their licence go into the manifest's "corpora". They are located (and
offline, found cached) before anything is written, and fetched one file after another once the
stage runs, so a cut run keeps what it fetched.

Usage:
    pipeline --lang hu ingest --source web=/data/cc100/hu.txt.xz
    pipeline --lang hu ingest --corpus fineweb-2 --max-tokens 2e9 --min-language-score 0.8
    pipeline --lang hu ingest --corpus fineweb-2 --corpus-root /mirror/fineweb-2     # no Hub
    pipeline ingest --source web='hf://datasets/HuggingFaceFW/fineweb-2/data/hun_Latn/train/*.parquet'
    pipeline ingest --source news=/data/news/ --source web='/data/oscar/*.jsonl.zst' --text-field content
    pipeline ingest --source books=books.txt --doc-per-line
    ingest(data_dir="data", lang="hu", sources={"web": "hu.txt.xz"})     # from Python
    ingest(data_dir="data", lang="hu", corpora=["fineweb-2"], max_tokens=["1e9"])
"""
from __future__ import annotations

import contextlib
import functools
import glob
import logging
import shutil
from collections import Counter
from pathlib import Path

import click

from common.atomic import atomic_open
from pipeline.core.errors import StageError
from pipeline.core.inputs import flat_name, resolve_output
from pipeline.core.manifest import MANIFEST, fingerprint_inputs
from pipeline.core.options import force_option
from pipeline.core.runner import StageRun, Task
from pipeline.core.sources import SEP, parse_pairs, plain
from pipeline.corpora.metadata import MetaPart, meta_path, meta_schema
from pipeline.corpora.options import Limits, WebRead, is_hub, parse_per_source
from pipeline.corpora.slicing import select
from pipeline.text.corpus_files import (
    COMPRESSIONS,
    FORMATS,
    check_file,
    clean_document,
    detect_format,
    read_records,
)

log = logging.getLogger("pipeline")

PART_MB = 64
INVALID_SHARE_LIMIT = 0.5   # more lines than this not UTF-8: the file is not text
WARNED = ("invalid_utf8_lines", "binary_lines", "invalid_json_lines", "records_without_field",
          "cut_documents")
FILTERED = ("below_min_language_score",)   # left out as asked: counted, no warning
_KNOWN_SUFFIXES = (".txt", ".text", ".jsonl", ".json", ".ndjson", ".parquet")


def source_files(name: str, spec: str) -> tuple[Path, list[Path]]:
    """(root, sorted files) of one source: a file, a folder (every file under it with a known
    suffix) or a glob; StageError when it names nothing."""
    path = Path(spec)
    if path.is_file():
        return path.parent, [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != MANIFEST
                       and not any(part.startswith(".") for part in p.relative_to(path).parts)
                       and _known(p))
        root = path
    else:
        files = sorted(Path(p) for p in glob.glob(spec, recursive=True) if Path(p).is_file())
        prefix = Path(spec.split("*")[0].split("?")[0].split("[")[0])   # the part before magic
        root = prefix if prefix.is_dir() else prefix.parent
    if not files:
        raise StageError(f"--source {name}={spec}: no files there (a file, a folder of .txt/"
                         ".jsonl/.parquet files, or a glob in quotes): check the path")
    return root, files


def _known(path: Path) -> bool:
    name = path.name.lower()
    for comp in (*COMPRESSIONS, ".zst"):
        if name.endswith(comp):
            name = name[: -len(comp)]
    return name.endswith(_KNOWN_SUFFIXES)


def _stem(root: Path, path: Path) -> str:
    name = flat_name(root, path)[: -len(".txt")]
    for suffix in (*COMPRESSIONS, ".zst", *_KNOWN_SUFFIXES):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    for suffix in _KNOWN_SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name.replace(SEP, "_")


def ingest_file(job: tuple, doc_per_line: bool, part_chars: int) -> dict:
    """One task: one input file into parts NAME__STEM_PPPP.txt (with a web source's metadata
    beside each: NAME__STEM_PPPP.meta.parquet), all renamed into place at the end (an
    interrupted task leaves no part behind)."""
    source, src, fmt, out_dir, stem, read = job
    stats: Counter = Counter()
    parts: list[Path] = []
    docs = paragraphs = chars = tokens = out_bytes = 0
    web = read.web
    schema = meta_schema(src, fmt, read.columns) if web else None
    columns = tuple(dict.fromkeys([*read.columns, *([read.score_column] if read.score_column else [])]))
    with contextlib.ExitStack() as stack:
        fh = meta = None
        size = 0
        records = read_records(src, fmt, stats, read.field, doc_per_line, columns)
        # a web source's documents are counted in tokens (its slice, its metadata); a local
        # corpus is read as it always was, at the speed of the cleaning
        chosen = select(records, stats, read.score_column, read.min_score, read.cap) if web else (
            (raw, row, 0) for raw, row in records)
        for raw, row, n_tokens in chosen:
            doc = clean_document(raw, stats)
            if not doc:
                continue
            if fh is None or size >= part_chars:
                parts.append(out_dir / f"{source}{SEP}{stem}_{len(parts):04d}.txt")
                fh, size = stack.enter_context(atomic_open(parts[-1])), 0
                meta = stack.enter_context(MetaPart(parts[-1], schema)) if web else None
            elif size:
                fh.write("\n")
            text = "\n".join(doc) + "\n"
            fh.write(text)
            if meta is not None:
                meta.add({c: row.get(c) for c in read.columns}, n_tokens)
            size += len(text) + 1
            docs += 1
            paragraphs += len(doc)
            chars += len(text)
            tokens += n_tokens
        lines = stats["lines"]
        if lines and stats["invalid_utf8_lines"] + stats["binary_lines"] > INVALID_SHARE_LIMIT * lines:
            raise StageError(f"{src}: {stats['invalid_utf8_lines'] + stats['binary_lines']:,} of "
                             f"{lines:,} lines are not UTF-8 text: convert it to UTF-8 (iconv) or "
                             "check --format")
    written = [*parts, *(meta_path(p) for p in parts if web)]
    out_bytes = sum(p.stat().st_size for p in parts)
    return {"source": source, "documents": docs, "paragraphs": paragraphs, "estimated_tokens": tokens,
            "input_bytes": src.stat().st_size, "output_bytes": out_bytes,
            "parts": [p.name for p in written], "written_files": [str(p) for p in written],
            "counted": {k: stats[k] for k in (*WARNED, *FILTERED) if stats[k]}}


def plan(sources: dict[str, str], fmt: dict[str, str], field: str) -> list[tuple[str, Path, str, str]]:
    """(source, file, format, output stem) for every input file, each file checked first."""
    jobs, stems = [], set()
    for name, spec in sources.items():
        root, files = source_files(name, spec)
        nonempty = False
        for f in files:
            f_fmt = detect_format(f, fmt.get(name) or fmt.get(""))
            check_file(f, f_fmt, field)
            nonempty = nonempty or f.stat().st_size > 0
            stem = _stem(root, f)
            if (name, stem) in stems:
                raise StageError(f"--source {name}: two files map to the output name {stem!r}: "
                                 "give a folder whose files have distinct names")
            stems.add((name, stem))
            jobs.append((name, f, f_fmt, stem))
        if not nonempty:
            raise StageError(f"--source {name}={spec} is empty: every file has 0 bytes")
    return jobs


def parse_format(values) -> dict[str, str]:
    """--format FMT (every source) or NAME=FMT, repeatable: {"": FMT, NAME: FMT}."""
    out = {}
    for v in values or ():
        name, _, f = v.rpartition("=")
        if f not in FORMATS:
            raise StageError(f"--format {v!r}: the format is one of {', '.join(FORMATS)} "
                             "(or NAME=FORMAT for one source)")
        out[name] = f
    return out


def ingest(data_dir="data", lang="hu", workers=None, output=None, force=False, sources=None,
           formats=(), text_field="text", doc_per_line=False, part_mb=PART_MB, corpora=(),
           corpus_roots=(), max_tokens=(), max_gb=(), min_language_score=None) -> dict:
    """Bring `sources` ({name: path, glob or hf:// URL}, in priority order) and the named
    `corpora` (the run's language's part of each) into ingested/; the summary."""
    if isinstance(sources, (list, tuple)):
        sources = parse_pairs(sources, "--source")
    sources, corpora = dict(sources or {}), [c.strip() for c in corpora or ()]
    if not sources and not corpora:
        raise StageError("ingest needs at least one --source NAME=PATH or --corpus NAME")
    parse_pairs([f"{k}={v}" for k, v in sources.items()], "--source")   # names checked
    fmt = parse_format(formats) if not isinstance(formats, dict) else formats
    if part_mb <= 0:
        raise StageError(f"--part-mb must be above 0 (got {part_mb})")
    limits = Limits(parse_per_source(max_tokens, "--max-tokens", int), parse_per_source(max_gb, "--max-gb"))
    urls = {n: v for n, v in sources.items() if is_hub(v)}
    local = {n: v for n, v in sources.items() if n not in urls}
    roots = corpus_roots if isinstance(corpus_roots, dict) else _roots(corpus_roots)
    parts, web = [], None
    if urls or corpora:   # huggingface_hub and langcodes load only for web sources (0.3 s)
        from pipeline.corpora import plan as web
        # every web source located (and offline, found cached) before anything is written
        parts = web.web_parts(lang, corpora, urls, roots, text_field, fmt, limits)
    named_limits = {*limits.tokens, *limits.gb} - {""} - {p.source for p in parts}
    if named_limits or (not parts and (limits.tokens or limits.gb or min_language_score is not None)):
        raise StageError(f"--max-tokens, --max-gb and --min-language-score are for web sources (--corpus, "
                         f"--source NAME=hf://...){': not ' + ', '.join(sorted(named_limits)) if named_limits else ''}")
    jobs = plan(local, fmt, text_field)
    out = resolve_output(data_dir, lang, "ingest", output)
    names = [*local, *(p.source for p in parts)]
    options = {"sources": {k: str(v) for k, v in sources.items()}, "format": fmt,
               "text_field": text_field, "doc_per_line": doc_per_line, "part_mb": part_mb}
    if parts:   # only then: an earlier ingest of local files keeps its options, and is not redone
        options.update(corpora=corpora, corpus_roots={k: str(v) for k, v in roots.items()},
                       max_tokens=limits.tokens, max_gb=limits.gb, min_language_score=min_language_score)
    inputs = fingerprint_inputs([f for _, f, _, _ in jobs]) + (web.fingerprint(parts) if parts else "")
    run = StageRun("ingest", out, options, inputs, force=force, workers=workers,
                   expected_bytes=sum(f.stat().st_size for _, f, _, _ in jobs)
                   + sum(p.expected_bytes(*limits.of(p.source)) * 2 for p in parts))   # text: ~2x Parquet
    if run.complete:
        return run.skip()
    read = WebRead(text_field)
    tasks = [Task(f"{n}{SEP}{stem}", (n, f, f_fmt, out, stem, read)) for n, f, f_fmt, stem in jobs]
    for part in parts:   # fetched and verified one file after another; a rerun finds them cached
        for path, stem, web_read in web.web_jobs(part, limits, min_language_score):
            stem = stem.replace(SEP, "_")
            tasks.append(Task(f"{part.source}{SEP}{stem}", (part.source, path, part.fmt, out, stem, web_read)))
    per_source: dict[str, Counter] = {n: Counter() for n in names}
    counted: dict[str, Counter] = {n: Counter() for n in names}
    outputs: list[Path] = []
    work = functools.partial(ingest_file, doc_per_line=doc_per_line, part_chars=int(part_mb * 1_000_000))
    for _task, info in run.run_tasks(tasks, work, desc="ingest", unit="file"):
        src = info["source"]
        per_source[src].update({k: info.get(k, 0) for k in ("documents", "paragraphs", "estimated_tokens",
                                                            "input_bytes", "output_bytes")})
        per_source[src]["files"] += 1
        counted[src].update(info["counted"])
        outputs += [out / p for p in info["parts"]]
    for name, c in per_source.items():
        if not c["documents"]:
            shutil.rmtree(out)   # no half-made corpus: the other sources' parts go too
            why = ", ".join(f"{k} {v:,}" for k, v in counted[name].items()) or "nothing readable"
            raise StageError(f"--source {name}={sources.get(name, name)} holds no documents after "
                             f"reading and cleaning ({why}): check the files and "
                             "--format/--text-field/--doc-per-line/--min-language-score")
        for what, n in counted[name].items():
            if what in WARNED:
                log.warning("ingest: %s: %s %s (counted, skipped)", name, f"{n:,}", what.replace("_", " "))
    summary = {
        "sources": names,
        "documents": sum(c["documents"] for c in per_source.values()),
        "paragraphs": sum(c["paragraphs"] for c in per_source.values()),
        "files": sum(1 for p in outputs if p.suffix == ".txt"),
        "input_bytes": sum(c["input_bytes"] for c in per_source.values()),
        "output_bytes": sum(c["output_bytes"] for c in per_source.values()),
        "per_source": plain({n: per_source[n] + counted[n] for n in names}),
        "seconds": run.seconds(),
    }
    # where each web source came from and under which licence: the manifest's "corpora"
    corpora_record = {p.source: {**p.provenance(), "slice_files": per_source[p.source]["files"],
                                 "slice_bytes": per_source[p.source]["input_bytes"]} for p in parts}
    return run.finish(summary, outputs, extra={"corpora": corpora_record} if parts else None)


def _roots(values) -> dict[str, str]:
    """--corpus-root DIR (the one web source) or NAME=DIR, repeatable: {"": DIR, NAME: DIR}."""
    out = {}
    for v in values or ():
        name, sep, path = str(v).partition("=")
        out[name.strip().lower() if sep else ""] = path if sep else str(v)
    return out


@click.command("ingest")
@click.option("--source", "sources", multiple=True, metavar="NAME=PATH|hf://...",
              help="A corpus to bring in: a file, a folder or a glob (quoted), or any Hub dataset as "
                   "hf://datasets/ORG/REPO[@REV]/GLOB; repeat for several. The order is the priority "
                   "of deduplication after Wikipedia.")
@click.option("--corpus", "corpora", multiple=True, metavar="NAME[@REV][:CODE]",
              help="A named web corpus, the part of the run's --lang fetched from the Hub: "
                   "fineweb-2, hplt-2, madlad-400, culturax (docs/pipeline.md); @REV pins a revision, "
                   ":CODE names the corpus's own language code (fineweb-2:srp_Latn). Repeat for several.")
@click.option("--corpus-root", "corpus_roots", multiple=True, metavar="[NAME=]DIR",
              help="A local copy laid out as the corpus's Hub repository, read instead of the Hub.")
@click.option("--max-tokens", multiple=True, metavar="[NAME=]N",
              help="Take the first documents of a web source up to N estimated tokens.")
@click.option("--max-gb", multiple=True, metavar="[NAME=]G",
              help="Take the first files of a web source up to G GB of downloads.")
@click.option("--min-language-score", type=click.FloatRange(0, 1), default=None,
              help="Keep only documents whose language score (FineWeb-2's language_score) is at least this.")
@click.option("--format", "formats", multiple=True, metavar="FORMAT|NAME=FORMAT",
              help=f"{'|'.join(FORMATS)} [default: from the file name: .txt, .jsonl/.json, "
                   ".parquet, each optionally .gz/.bz2/.xz/.zst].")
@click.option("--text-field", default="text", show_default=True,
              help="The JSONL field or Parquet column that holds the text.")
@click.option("--doc-per-line", is_flag=True,
              help="Text files hold one document per line [default: a paragraph per line, a blank "
                   "line between documents, as CC-100 and OSCAR].")
@click.option("--part-mb", type=click.FloatRange(min=0, min_open=True), default=PART_MB,
              show_default=True, help="Most text per output file (later stages read a file at a time).")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/ingested].")
@force_option
@click.pass_obj
def command(g, sources, corpora, corpus_roots, max_tokens, max_gb, min_language_score, formats,
            text_field, doc_per_line, part_mb, output, force):
    """Bring other corpora in: local text, JSONL or Parquet (also .gz/.bz2/.xz/.zst), Hub
    datasets, and the named web corpora of the run's language, as formatted text.

    Writes ingested/NAME__FILE_PPPP.txt, one paragraph per line and a blank line between
    documents, as format writes Wikipedia (a web source's own columns per document beside each,
    NAME__FILE_PPPP.meta.parquet); `pipeline dedup` then mixes and deduplicates them.
    """
    ingest(**g.kwargs(), output=output, force=force, sources=list(sources), formats=formats,
           text_field=text_field, doc_per_line=doc_per_line, part_mb=part_mb, corpora=corpora,
           corpus_roots=corpus_roots, max_tokens=max_tokens, max_gb=max_gb,
           min_language_score=min_language_score)
