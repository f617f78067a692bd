"""`pipeline format` — extracted articles to clean text: one paragraph per line, a blank line
between articles.

Usage:
    pipeline --lang hu format                          # DATA_DIR/hu/extracted -> DATA_DIR/hu/formatted
    pipeline format --input /tmp/extracted --output /tmp/formatted
    format_corpus(data_dir="data", lang="hu", workers=2)   # from Python; returns the summary

Reads wikiextractor output, JSON lines (as `extract` writes) or its classic `<doc ...>` blocks,
and writes one `.txt` per input file, named after its path (`AA/wiki_00` -> `AA_wiki_00.txt`),
names that the later stages carry on. Per article: section headings are dropped (as NVIDIA's
formatting does; a heading is not a sentence, and empty sections vanish with them), the title
line of `<doc>` input too; every paragraph is cleaned of leftover markup (`{{`, `[[`, `<ref`,
table rows, HTML tags and entities; see pipeline/text/cleaning.py) and NFC-normalised; articles left with
no paragraph are dropped and counted. An input file that yields no article writes no output.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from common.atomic import atomic_open
from pipeline.core.errors import StageError
from pipeline.core.inputs import flat_name, resolve_input, resolve_output
from pipeline.core.manifest import MANIFEST, fingerprint_inputs
from pipeline.core.options import force_option
from pipeline.core.runner import StageRun, Task
from pipeline.text.articles import read_articles
from pipeline.text.cleaning import format_article
from pipeline.text.versions import library_versions, stage_rules


def input_files(path: Path) -> list[Path]:
    """The extracted files under `path` (or `path` itself), sorted, bookkeeping files skipped."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise StageError(f"input {path} does not exist: run `pipeline extract` first, or check --input")
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != MANIFEST
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not files:
        raise StageError(f"input folder {path} holds no extracted files: check --input")
    return files


def format_file(job: tuple[Path, Path]) -> dict:
    """One task: the articles of one extracted file, cleaned, into one .txt (none if empty)."""
    src, dst = job
    docs = paragraphs = empty = 0
    chunks = []
    dropped = Counter()
    for _title, lines in read_articles(src):
        paras = format_article(lines, dropped)
        if not paras:
            empty += 1
            continue
        chunks.append("\n".join(paras) + "\n")
        docs += 1
        paragraphs += len(paras)
    info = {"documents": docs, "paragraphs": paragraphs, "empty": empty, "dropped": dict(dropped),
            "input_bytes": src.stat().st_size, "bytes": 0, "written": bool(docs)}
    if docs:
        with atomic_open(dst) as fh:
            fh.write("\n".join(chunks))  # exactly one blank line between documents
        info["bytes"] = dst.stat().st_size
    elif dst.exists():
        dst.unlink()
    return info


def format_corpus(*, data_dir="data", lang="hu", workers=None, input=None, output=None,
                  force=False) -> dict:
    """Format extracted articles; see the module docstring. Returns the summary dict."""
    src_root = resolve_input(data_dir, lang, "format", input)
    out = resolve_output(data_dir, lang, "format", output)
    files = input_files(src_root)
    names = [flat_name(src_root, f, strip_suffixes=(".json", ".jsonl", ".txt")) for f in files]
    if len(set(names)) != len(names):
        raise StageError(f"input files under {src_root} map to the same output name: give a flat folder")
    run = StageRun("format", out, {}, fingerprint_inputs([src_root]), force=force, workers=workers,
                   expected_bytes=sum(f.stat().st_size for f in files),   # cleaning only shrinks
                   rules=stage_rules("format"))
    if run.complete:
        return run.skip()
    tasks = [Task(n, (f, out / n), outputs=(out / n,)) for f, n in zip(files, names)]
    totals = {"documents": 0, "paragraphs": 0, "empty": 0, "input_bytes": 0, "bytes": 0}
    outputs = []
    dropped = Counter()
    for task, info in run.run_tasks(tasks, format_file, desc="format", unit="file"):
        for k in totals:
            totals[k] += info[k]
        dropped.update(info["dropped"])
        if info["written"]:
            outputs.append(task.outputs[0])
    if totals["documents"] == 0:
        raise StageError(f"no article text left in {src_root} after formatting: check the extract output")
    summary = {
        "documents": totals["documents"],
        "paragraphs": totals["paragraphs"],
        "files": len(outputs),
        "dropped": {"empty_articles": totals["empty"]},
        "dropped_paragraphs": dict(dropped.most_common()),
        "input_bytes": totals["input_bytes"],
        "output_bytes": totals["bytes"],
        "seconds": run.seconds(),
    }
    return run.finish(summary, outputs, extra={"libraries": library_versions("format")})


@click.command("format")
@click.option("--input", "input", type=click.Path(path_type=Path), default=None,
              help="Extracted folder or file [default: DATA_DIR/LANG/extracted].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/formatted].")
@force_option
@click.pass_obj
def command(g, input, output, force):
    """Clean extracted articles: one paragraph per line, blank line between articles.

    Headings, leftover markup ({{, [[, <ref>, tables, HTML) and empty articles are dropped;
    text is NFC. Writes one .txt per extracted file (AA/wiki_00 -> AA_wiki_00.txt).
    """
    format_corpus(**g.kwargs(), input=input, output=output, force=force)
