"""`pipeline extract` — article text out of a MediaWiki dump, with wikiextractor, in parallel.

Usage:
    pipeline --lang hu extract                         # DATA_DIR/hu/download -> DATA_DIR/hu/extracted
    pipeline --lang uk --workers 2 extract --input ukwiki.xml.xz --output /tmp/extracted
    pipeline --workers 8 extract --input huwiki-20240501-pages-articles-multistream.xml.bz2
    extract(data_dir="data", lang="hu", workers=2)     # the same from Python; returns the summary

Reads a dump (.xml, .bz2, .xz, .gz; truncated dumps too) and writes wikiextractor's JSON-lines
layout, `AA/wiki_00`, `AA/wiki_01`, ... one {"id", "revid", "url", "title", "text", "links"}
object per article, where text holds one paragraph per line and section headings as lines
starting "## ", and links lists the article's internal links that reach the text as
[start, end, target] (character offsets into text, the linked page's title; for the probe
stage; pipeline/text/links.py).

Kept: namespace-0 pages that are not redirects. Dropped and counted by reason: other
namespaces, redirects, pages whose text is empty after cleaning, and pages wikiextractor fails
on (counted, never fatal).

How the work is split. A multistream dump (`...-multistream.xml.bz2`, many bz2 streams of
about 100 pages) is cut into windows of the file, --task-mb/4 MB of compressed dump each (about
--task-mb of wikitext); a task decompresses the streams that start in its window and writes
their articles to one file, so no single reader limits the workers
(pipeline/text/multistream.py). The stream starts come from the index beside the dump
(`...-multistream-index.txt.bz2`, or --index), or are searched for in the dump; the windows
are the same either way. Any other dump is read once, as a stream, by this process: its
complete pages are grouped in dump order into tasks of about --task-mb of wikitext, which go to
the workers through a work file (a path in the task, not the text). Worker processes turn each
task into one output file with wikiextractor's own Extractor (pipeline/text/articles.py;
wikiextractor 3.1.0 as installed, not vendored). Task boundaries depend on the dump and
--task-mb only, so any --workers (or a Dask cluster) writes the same bytes, and a rerun skips
the tasks already done. The two forms of one dump give the same JSON lines in the same order;
only where one file ends and the next begins differs. Templates are dropped, not expanded (see
pipeline/text/articles.py).
"""
from __future__ import annotations

import collections
import json
import logging
from pathlib import Path

import click

from common.atomic import atomic_open
from pipeline.core.errors import StageError
from pipeline.core.manifest import fingerprint_inputs, require_stage_output
from pipeline.core.options import force_option
from pipeline.core.registry import stage_dir
from pipeline.core.report import progress
from pipeline.core.runner import StageRun, Task
from pipeline.text.articles import dropped_link_prefixes, extract_pages, namespace_names, page_namespace
from pipeline.text.dump import DumpReader, SiteInfo, check_dump, siteinfo_of, sniff_compression
from pipeline.text.multistream import Header, cut_windows, find_index, read_header, read_index
from pipeline.text.versions import library_versions, stage_rules

log = logging.getLogger("pipeline")
# Article text per byte of a compressed dump, for the free-space check (ukwiki .xz: 2.3).
TEXT_PER_COMPRESSED_BYTE = 3
# Wikitext per byte of a bz2 multistream dump (about 4): a window of --task-mb / 4 MB of the file
# holds about --task-mb of wikitext.
WIKITEXT_PER_BZ2_BYTE = 4


def dump_text_estimate(dump: Path) -> int:
    """About how many bytes of article text `dump` yields (an .xml dump: fewer than its size)."""
    size = dump.stat().st_size
    return size if dump.suffix == ".xml" else size * TEXT_PER_COMPRESSED_BYTE


def task_file(output: Path, index: int) -> Path:
    """wikiextractor's layout: 100 files per folder, folders AA, AB, ..."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    folder = index // 100
    return output / f"{letters[folder // 26 % 26]}{letters[folder % 26]}" / f"wiki_{index % 100:02d}"


def resolve_dump(data_dir, lang: str, input, index=None) -> tuple[Path, list[Path], Path | None]:
    """(dump file, paths to fingerprint, multistream index or None): --input (and --index, else
    the index beside it), else the finished download stage's dump and index."""
    if index is not None and not Path(index).is_file():
        raise StageError(f"index {index} does not exist: give the dump's -multistream-index.txt.bz2 "
                         "with --index, or leave it out (the streams are then searched for)")
    if input is not None:
        return Path(input), [Path(input)], Path(index) if index is not None else find_index(input)
    down = stage_dir(data_dir, lang, "download")
    manifest = require_stage_output(down, "download")
    dump = Path(manifest["dump"])
    if not dump.is_absolute():
        dump = down / dump
    if index is None and manifest.get("index"):
        index = Path(manifest["index"]) if Path(manifest["index"]).is_absolute() else down / manifest["index"]
    return dump, [down], Path(index) if index is not None else None


def _window(task_mb: float) -> int:
    return max(1, int(task_mb * 1_000_000 / WIKITEXT_PER_BZ2_BYTE))


def _add(info: dict, task: Task, counts, dropped, outputs: list[Path]) -> None:
    """A finished task's counts into the stage's totals."""
    if task.outputs[0].is_file():
        outputs.append(task.outputs[0])
    counts["articles"] += info["articles"]
    counts["bytes"] += info["bytes"]
    dropped["empty"] += info["empty"]
    dropped["wikiextractor_error"] += info.get("failed", 0)


def article_job(path: Path, site: SiteInfo, pages) -> tuple:
    """The argument of pipeline.text.articles.extract_pages for `pages` of the wiki `site`."""
    template_prefix = (site.namespaces.get(10) or "Template") + ":"
    return (path, site.urlbase, template_prefix, namespace_names(site), pages,
            dropped_link_prefixes(site))


def page_tasks(reader: DumpReader, run: StageRun, out: Path, task_bytes: int,
               dropped: collections.Counter, bar):
    """The dump's article pages, in dump order, cut into tasks of about `task_bytes` of wikitext
    (one output file each); pages of other namespaces and redirects are counted in `dropped`.
    A task's pages go to a file in the run's work folder (a path, not the text, travels to the
    worker: on a cluster the text would otherwise pass through the scheduler). The file is JSON
    lines, not a pickle: a worker reading a file on a shared filesystem runs no code from it."""
    batch: list[tuple] = []
    size = index = 0

    def task() -> Task:
        path, spill = task_file(out, index), run.work_dir / f"pages_{index}.jsonl"
        if not run.task_done(str(index)):
            with atomic_open(spill, "w") as fh:
                fh.writelines(json.dumps(page, ensure_ascii=False) + "\n" for page in batch)
        return Task(str(index), (path, reader.siteinfo, spill), outputs=(path,))

    for page in reader.pages():
        bar.update(reader.compressed_read - bar.n)
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


def extract_batch(job: tuple) -> dict:
    """One task of a single-stream dump: the pages the reader put in a work file."""
    path, site, spill = job
    with open(spill, encoding="utf-8") as fh:
        pages = [tuple(json.loads(line)) for line in fh]
    return extract_pages(article_job(path, site, pages))


def extract_range(job: tuple) -> dict:
    """One task of a multistream dump: decompress the streams of one byte range, keep its
    articles (none: no file). Counts the pages dropped for their namespace or as redirects."""
    path, dump, byte_range, site = job
    reader = DumpReader(dump, byte_range=byte_range, siteinfo=site)
    dropped = collections.Counter()

    def articles():
        for page in reader.pages():
            if page_namespace(page, site) != "0":
                dropped["other_namespace"] += 1
            elif page.redirect:
                dropped["redirect"] += 1
            else:
                yield page.id, page.revid, page.title, page.text

    info = extract_pages(article_job(path, site, articles()))
    if info["articles"] == 0:
        Path(path).unlink(missing_ok=True)
        info["bytes"] = 0
    return {**info, "other_namespace": dropped["other_namespace"], "redirect": dropped["redirect"],
            "xml_bytes": reader.xml_bytes, "first": reader.streams.first, "stop": reader.streams.stop,
            "truncated": reader.truncated, "truncation": reader.truncation, "newest": reader.newest}


def range_tasks(dump: Path, header: Header, index: Path | None, out: Path, window: int):
    """The multistream dump cut into windows (pipeline/text/multistream.py), one task each;
    and whether the index lists streams past the end of the file (a truncated dump)."""
    size = dump.stat().st_size
    starts = read_index(index) if index is not None else None
    cut = False
    if starts is not None:
        if starts[0] != header.end:
            raise StageError(f"the index {index} does not match {dump}: its first stream is at byte "
                             f"{starts[0]:,}, the dump's at {header.end:,}; give this dump's own "
                             "index with --index, or none")
        cut = starts[-1] >= size
        starts = [s for s in starts if s < size]
    site = siteinfo_of(header.xml)
    tasks = [Task(str(i), (task_file(out, i), dump, window_range, site), outputs=(task_file(out, i),))
             for i, window_range in enumerate(cut_windows(header.end, size, window, starts))]
    return tasks, cut


def extract(*, data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
            task_mb: float = 2.0, index=None) -> dict:
    """Extract the articles of a dump; see the module docstring. Returns the summary dict."""
    out = Path(output) if output is not None else stage_dir(data_dir, lang, "extract")
    if task_mb <= 0:
        raise StageError(f"--task-mb must be positive, got {task_mb}")
    dump, fp_paths, index = resolve_dump(data_dir, lang, input, index)
    check_dump(dump)
    header = read_header(dump) if sniff_compression(dump) == "bz2" else None
    options = {"task_mb": task_mb} if header is None else {"task_mb": task_mb, "multistream": True}
    run = StageRun("extract", out, options, fingerprint_inputs(fp_paths), force=force,
                   workers=workers, expected_bytes=dump_text_estimate(dump),
                   rules=stage_rules("extract"))
    if run.complete:
        return run.skip()

    dropped = collections.Counter()
    counts = collections.Counter()
    outputs: list[Path] = []
    if header is None:
        if index is not None:
            raise StageError(f"--index {index} goes with a multistream dump, and {dump} is none: "
                             "leave --index out")
        reader = DumpReader(dump)
        bar = progress(total=reader.compressed_bytes, unit="B", unit_scale=True, desc="extract")
        # `with bar`: an error mid-dump clears the bar first, so its message is a line of its own.
        with bar:
            tasks = page_tasks(reader, run, out, int(task_mb * 1_000_000), dropped, bar)
            for task, info in run.run_tasks(tasks, extract_batch):
                task.arg[2].unlink(missing_ok=True)
                _add(info, task, counts, dropped, outputs)
        truncated, truncation, xml_bytes = reader.truncated, reader.truncation, reader.xml_bytes
        newest = reader.newest
    else:
        tasks, truncated = range_tasks(dump, header, index, out, _window(task_mb))
        truncation = "the index lists streams past its end" if truncated else ""
        xml_bytes, newest = len(header.xml), ""
        stop = header.end
        with progress(total=dump.stat().st_size - header.end, unit="B", unit_scale=True,
                      desc="extract") as bar:
            for task, info in run.run_tasks(tasks, extract_range):
                start, end, _ = task.arg[2]
                if info["first"] is not None and info["first"] != stop:
                    raise StageError(f"dump {dump}: the bz2 streams read do not join up at byte "
                                     f"{stop:,} (next read from {info['first']:,}): the dump is corrupt")
                stop = info["stop"] if info["stop"] is not None else stop
                bar.update(end - start)
                _add(info, task, counts, dropped, outputs)
                dropped["other_namespace"] += info["other_namespace"]
                dropped["redirect"] += info["redirect"]
                xml_bytes += info["xml_bytes"]
                newest = max(newest, info["newest"])
                if info["truncated"]:
                    truncated, truncation = True, info["truncation"]
        if not truncated and stop != dump.stat().st_size:
            raise StageError(f"dump {dump}: its bz2 streams from byte {stop:,} on could not be read: "
                             "the dump is corrupt; download it again")

    if truncated:
        log.warning("warning: %s is truncated (%s): kept the %d complete pages before the cut",
                    dump, truncation, counts["articles"] + sum(dropped.values()))
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
        "xml_bytes": xml_bytes,
        "output_bytes": counts["bytes"],
        "truncated": truncated,
        # the dump's date where its file name has none (the model card's): its newest revision
        **({"newest_revision": newest} if newest else {}),
        "seconds": run.seconds(),
    }
    return run.finish(summary, outputs, extra={"dump": str(dump.resolve()),
                                               "libraries": library_versions("extract")})


@click.command("extract")
@click.option("--input", "input", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Dump file to read (.xml/.bz2/.xz/.gz) [default: the download stage's dump].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/extracted].")
@click.option("--index", "index", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Index of a multistream dump [default: NAME-multistream-index.txt.bz2 beside "
                   "it, or the download stage's; without one the streams are searched for].")
@click.option("--task-mb", type=click.FloatRange(min=0, min_open=True), default=2.0, show_default=True,
              help="Wikitext per task (one output file each); part of the output's identity.")
@force_option
@click.pass_obj
def command(g, input, output, index, task_mb, force):
    """Extract namespace-0 articles (no redirects) from a dump with wikiextractor, in parallel.

    Writes AA/wiki_00, ... as JSON lines {"id", "revid", "url", "title", "text"}. A truncated
    dump gives every complete page and one warning. Templates are dropped, not expanded.
    """
    extract(**g.kwargs(), input=input, output=output, force=force, task_mb=task_mb, index=index)
