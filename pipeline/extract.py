"""`pipeline extract` — article text out of a MediaWiki dump, with wikiextractor, in parallel.

Usage:
    pipeline --lang hu extract                         # DATA_DIR/hu/download -> DATA_DIR/hu/extracted
    pipeline --lang uk --workers 2 extract --input ukwiki.xml.xz --output /tmp/extracted
    extract(data_dir="data", lang="hu", workers=2)     # the same from Python; returns the summary

Reads a dump (.xml, .bz2, .xz, .gz; truncated dumps too) and writes wikiextractor's JSON-lines
layout, `AA/wiki_00`, `AA/wiki_01`, ... one {"id", "revid", "url", "title", "text"} object per
article, where text holds one paragraph per line and section headings as lines starting "## ".

Kept: namespace-0 pages that are not redirects. Dropped and counted by reason: other
namespaces, redirects, pages whose text is empty after cleaning, and pages wikiextractor fails
on (counted, never fatal).

How the work is split: the dump is read once, as a stream, by this process (decompression is
sequential anyway); complete pages are grouped in dump order into tasks of about --task-mb of
wikitext, and worker processes turn each task into one output file with wikiextractor's own
Extractor (wikiextractor 3.1.0 as installed, not vendored). Task boundaries depend on the dump
and --task-mb only, so --workers 1 and 2 write the same bytes, and a rerun re-reads the dump
but skips the tasks already done.

Templates are not expanded: expansion needs the dump's Template: pages in memory in every worker
and a second pass over the dump, and what it adds to plain text is mostly infobox and
navigation-box residue. Templates are dropped, as wikiextractor --no-templates does; the price
is the odd missing inline value ({{convert|...}}, {{lang|...}}), which format's cleanup copes with.
"""
from __future__ import annotations

import collections
import json
import logging
import time
from pathlib import Path

import click

from .dumpfile import DumpReader, check_dump
from .cli_options import force_option
from .stage import (StageError, StageRun, atomic_open, default_workers, fingerprint_inputs,
                    progress, read_manifest, report, require_stage_output, stage_dir)

log = logging.getLogger("pipeline")

# Canonical (English) namespace names, valid on every wiki besides the local names.
CANONICAL_NAMESPACES = {
    -2: "Media", -1: "Special", 1: "Talk", 2: "User", 3: "User talk", 4: "Project", 5: "Project talk",
    6: "File", 7: "File talk", 8: "MediaWiki", 9: "MediaWiki talk", 10: "Template",
    11: "Template talk", 12: "Help", 13: "Help talk", 14: "Category", 15: "Category talk",
    100: "Portal", 828: "Module",
}
EXTRA_PREFIXES = {"Image", "Image talk", "Wikipedia", "WP"}


def task_file(output: Path, index: int) -> Path:
    """wikiextractor's layout: 100 files per folder, folders AA, AB, ..."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    folder = index // 100
    return output / f"{letters[folder // 26 % 26]}{letters[folder % 26]}" / f"wiki_{index % 100:02d}"


def remove_stale_temporaries(out: Path) -> None:
    """Temporary files a killed run left (atomic_path names them .NAME.*.tmp); never outputs."""
    for tmp in out.rglob(".*.tmp"):
        if tmp.is_file():
            tmp.unlink()


def resolve_dump(data_dir, lang: str, input) -> tuple[Path, list[Path]]:
    """(dump file, paths to fingerprint): --input, else the finished download stage."""
    if input is not None:
        return Path(input), [Path(input)]
    down = stage_dir(data_dir, lang, "download")
    manifest = require_stage_output(down, "download")
    dump = Path(manifest["dump"])
    if not dump.is_absolute():
        dump = down / dump
    return dump, [down]


def _namespace_names(siteinfo) -> set[str]:
    names = {n for n in siteinfo.namespaces.values() if n}
    names |= set(CANONICAL_NAMESPACES.values()) | EXTRA_PREFIXES
    return names


def page_namespace(page, siteinfo) -> str:
    """The page's <ns>; very old exports have none, then the title's prefix decides."""
    if page.ns:
        return page.ns
    prefix, colon, _ = page.title.partition(":")
    if colon:
        for key, name in siteinfo.namespaces.items():
            if name and name == prefix:
                return str(key)
    return "0"


def _extract_task(job: tuple) -> dict:
    """Worker: turn one task's pages into one JSON-lines file (atomic). Returns its counts."""
    from wikiextractor.extract import Extractor

    logging.getLogger("wikiextractor").setLevel(logging.ERROR)
    path, urlbase, template_prefix, known, pages = job
    written = empty = failed = 0
    with atomic_open(path) as out:
        for pid, revid, title, text in pages:
            extractor = Extractor(pid, revid, urlbase, title, [text], templatePrefix=template_prefix,
                                  knownNamespaces=known, keepSections=True)
            try:
                paragraphs = extractor.clean_text(text, mark_headers=True, expand_templates=False,
                                                  html_safe=False)
            except Exception:  # noqa: BLE001 - one pathological page must not sink a whole dump
                failed += 1
                continue
            body = "\n".join(p for p in paragraphs if p.strip())
            if not any(p.strip() and not p.startswith("## ") for p in paragraphs):
                empty += 1
                continue
            record = {"id": pid, "revid": revid, "url": extractor.url, "title": title, "text": body}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return {"articles": written, "empty": empty, "failed": failed, "bytes": Path(path).stat().st_size}


class _OrderedPool:
    """Jobs to `workers` processes, at most 2*workers in flight (bounded memory), results in
    submission order. (stage.parallel_map needs the whole item list up front; a dump's pages
    must stream.)"""

    def __init__(self, func, workers: int):
        self.func, self.workers = func, workers
        self.pool = None
        self.pending: collections.deque = collections.deque()

    def __enter__(self):
        if self.workers > 1:
            import multiprocess
            self.pool = multiprocess.get_context("fork").Pool(self.workers)
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.terminate() if exc[0] else self.pool.close()
            self.pool.join()

    def submit(self, key, job):
        """Queue a job; yields (key, result) of finished jobs when too many are in flight."""
        if self.pool is None:
            yield key, self.func(job)
            return
        self.pending.append((key, self.pool.apply_async(self.func, (job,))))
        while len(self.pending) > 2 * self.workers:
            k, res = self.pending.popleft()
            yield k, res.get()

    def drain(self):
        while self.pending:
            k, res = self.pending.popleft()
            yield k, res.get()


def extract(*, data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
            task_mb: float = 2.0) -> dict:
    """Extract the articles of a dump; see the module docstring. Returns the summary dict."""
    out = Path(output) if output is not None else stage_dir(data_dir, lang, "extract")
    if task_mb <= 0:
        raise StageError(f"--task-mb must be positive, got {task_mb}")
    dump, fp_paths = resolve_dump(data_dir, lang, input)
    check_dump(dump)
    run = StageRun("extract", out, {"task_mb": task_mb}, fingerprint_inputs(fp_paths), force=force)
    if run.complete:
        report("extract", run.manifest["summary"], skipped=True)
        return run.manifest["summary"]

    remove_stale_temporaries(out)
    workers = default_workers(workers)
    task_bytes = int(task_mb * 1_000_000)
    reader = DumpReader(dump)
    dropped = collections.Counter()
    counts = collections.Counter()
    outputs: list[Path] = []
    started = time.time()

    def record(index: int, info: dict) -> None:
        run.mark_done(str(index), info)
        counts["articles"] += info["articles"]
        counts["bytes"] += info["bytes"]
        dropped["empty"] += info["empty"]
        dropped["wikiextractor_error"] += info.get("failed", 0)

    bar = progress(total=reader.compressed_bytes, unit="B", unit_scale=True, desc="extract")
    batch: list[tuple] = []
    batch_size = 0
    index = 0
    known = template_prefix = None
    # `with bar`: an error mid-dump clears the bar first, so its message is a line of its own.
    with bar, _OrderedPool(_extract_task, workers) as pool:
        def flush():
            nonlocal batch, batch_size, index
            path = task_file(out, index)
            outputs.append(path)
            key = index
            index += 1
            job_pages, batch, batch_size = batch, [], 0
            if run.task_done(str(key)) and path.is_file():
                record(key, run.task_info(str(key)))
                return
            yield from pool.submit(key, (path, reader.siteinfo.urlbase, template_prefix, known, job_pages))

        for page in reader.pages():
            bar.update(reader.compressed_read - bar.n)
            if known is None:
                known = _namespace_names(reader.siteinfo)
                template_prefix = (reader.siteinfo.namespaces.get(10) or "Template") + ":"
            if page_namespace(page, reader.siteinfo) != "0":
                dropped["other_namespace"] += 1
                continue
            if page.redirect:
                dropped["redirect"] += 1
                continue
            batch.append((page.id, page.revid, page.title, page.text))
            batch_size += len(page.text)
            if batch_size >= task_bytes:
                for key, info in flush():
                    record(key, info)
        if batch:
            for key, info in flush():
                record(key, info)
        for key, info in pool.drain():
            record(key, info)
    bar.close()

    if reader.truncated:
        log.warning("warning: %s is truncated (%s): kept the %d complete pages before the cut",
                    dump, reader.truncation, counts["articles"] + sum(dropped.values()))
    if counts["articles"] == 0:
        raise StageError(
            f"no articles extracted from {dump} ({sum(dropped.values())} pages read, dropped: "
            f"{dict(dropped) or 'none'}): it holds no namespace-0 article pages; check that it is "
            "a pages-articles dump of a Wikipedia")
    summary = {
        "documents": counts["articles"],
        "files": len(outputs),
        "dropped": {k: dropped[k] for k in ("other_namespace", "redirect", "empty", "wikiextractor_error")
                    if dropped[k] or k != "wikiextractor_error"},
        "input_bytes": dump.stat().st_size,
        "xml_bytes": reader.xml_bytes,
        "output_bytes": counts["bytes"],
        "truncated": reader.truncated,
        "seconds": round(time.time() - started, 2),
    }
    run.finish(summary, outputs, extra={"dump": str(dump.resolve())})
    report("extract", summary)
    return summary


@click.command("extract")
@click.option("--input", "input", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Dump file to read (.xml/.bz2/.xz/.gz) [default: the download stage's dump].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/extracted].")
@click.option("--task-mb", type=click.FloatRange(min=0, min_open=True), default=2.0, show_default=True,
              help="Wikitext per task (one output file each); part of the output's identity.")
@force_option
@click.pass_obj
def command(g, input, output, task_mb, force):
    """Extract namespace-0 articles (no redirects) from a dump with wikiextractor, in parallel.

    Writes AA/wiki_00, ... as JSON lines {"id", "revid", "url", "title", "text"}. A truncated
    dump gives every complete page and one warning. Templates are dropped, not expanded.
    """
    extract(**g.kwargs(), input=input, output=output, force=force, task_mb=task_mb)
