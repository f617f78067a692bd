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
Extractor (pipeline/text/articles.py; wikiextractor 3.1.0 as installed, not vendored). Task
boundaries depend on the dump and --task-mb only, so --workers 1 and 2 write the same bytes,
and a rerun re-reads the dump but skips the tasks already done. Templates are dropped, not
expanded (see pipeline/text/articles.py).
"""
from __future__ import annotations

import collections
import logging
from pathlib import Path

import click

from pipeline.core.errors import StageError
from pipeline.core.manifest import fingerprint_inputs, require_stage_output
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir
from pipeline.core.report import progress
from pipeline.core.runner import StageRun, Task
from pipeline.text.articles import extract_pages, namespace_names, page_namespace
from pipeline.text.dump import DumpReader, check_dump

log = logging.getLogger("pipeline")


def task_file(output: Path, index: int) -> Path:
    """wikiextractor's layout: 100 files per folder, folders AA, AB, ..."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    folder = index // 100
    return output / f"{letters[folder // 26 % 26]}{letters[folder % 26]}" / f"wiki_{index % 100:02d}"


def resolve_dump(data_dir, lang: str, input) -> tuple[Path, list[Path]]:
    """(dump file, paths to fingerprint): --input, else the finished download stage's dump."""
    if input is not None:
        return Path(input), [Path(input)]
    down = stage_dir(data_dir, lang, "download")
    manifest = require_stage_output(down, "download")
    dump = Path(manifest["dump"])
    if not dump.is_absolute():
        dump = down / dump
    return dump, [down]


def page_tasks(reader: DumpReader, out: Path, task_bytes: int, dropped: collections.Counter, bar):
    """The dump's article pages, in dump order, cut into tasks of about `task_bytes` of wikitext
    (one output file each); pages of other namespaces and redirects are counted in `dropped`."""
    batch: list[tuple] = []
    size = index = 0
    known = template_prefix = None

    def task() -> Task:
        path = task_file(out, index)
        return Task(str(index), (path, reader.siteinfo.urlbase, template_prefix, known, batch),
                    outputs=(path,))

    for page in reader.pages():
        bar.update(reader.compressed_read - bar.n)
        if known is None:
            known = namespace_names(reader.siteinfo)
            template_prefix = (reader.siteinfo.namespaces.get(10) or "Template") + ":"
        if page_namespace(page, reader.siteinfo) != "0":
            dropped["other_namespace"] += 1
            continue
        if page.redirect:
            dropped["redirect"] += 1
            continue
        batch.append((page.id, page.revid, page.title, page.text))
        size += len(page.text)
        if size >= task_bytes:
            yield task()
            batch, size, index = [], 0, index + 1
    if batch:
        yield task()


def extract(*, data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
            task_mb: float = 2.0) -> dict:
    """Extract the articles of a dump; see the module docstring. Returns the summary dict."""
    out = Path(output) if output is not None else stage_dir(data_dir, lang, "extract")
    if task_mb <= 0:
        raise StageError(f"--task-mb must be positive, got {task_mb}")
    dump, fp_paths = resolve_dump(data_dir, lang, input)
    check_dump(dump)
    run = StageRun("extract", out, {"task_mb": task_mb}, fingerprint_inputs(fp_paths), force=force,
                   workers=workers)
    if run.complete:
        return run.skip()

    reader = DumpReader(dump)
    dropped = collections.Counter()
    counts = collections.Counter()
    outputs: list[Path] = []
    bar = progress(total=reader.compressed_bytes, unit="B", unit_scale=True, desc="extract")
    # `with bar`: an error mid-dump clears the bar first, so its message is a line of its own.
    with bar:
        tasks = page_tasks(reader, out, int(task_mb * 1_000_000), dropped, bar)
        for task, info in run.run_tasks(tasks, extract_pages):
            outputs.append(task.outputs[0])
            counts["articles"] += info["articles"]
            counts["bytes"] += info["bytes"]
            dropped["empty"] += info["empty"]
            dropped["wikiextractor_error"] += info.get("failed", 0)

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
        "seconds": run.seconds(),
    }
    return run.finish(summary, outputs, extra={"dump": str(dump.resolve())})


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
