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
table rows, HTML tags and entities; see wikitext_clean) and NFC-normalised; articles left with
no paragraph are dropped and counted. An input file that yields no article writes no output.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import click

from .cli_options import force_option
from .stage import (MANIFEST, StageError, StageRun, atomic_open, fingerprint_inputs,
                    parallel_map, report, require_stage_output, stage_dir)
from .extract import remove_stale_temporaries
from .wikitext_clean import clean_paragraph


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


def output_name(path: Path, root: Path) -> str:
    """`AA/wiki_00` -> `AA_wiki_00.txt` (flat folder; the name travels through later stages)."""
    rel = path.relative_to(root) if root.is_dir() else Path(path.name)
    name = "_".join(rel.parts)
    for suffix in (".json", ".jsonl", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name + ".txt"


def read_articles(path: Path):
    """Yield (title, [paragraph lines]) from a wikiextractor file, JSON lines or <doc> blocks."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = None
            for lineno, line in enumerate(fh, 1):
                if doc is None and line.startswith("{"):
                    try:
                        rec = json.loads(line)
                        yield rec.get("title", ""), rec["text"].split("\n")
                    except (json.JSONDecodeError, KeyError, AttributeError):
                        raise StageError(f"{path} line {lineno} is not a wikiextractor JSON record "
                                         "with a 'text' field: is --input the output of extract?") from None
                elif line.startswith("<doc ") or line.startswith("<doc>"):
                    doc = []
                elif line.startswith("</doc>") and doc is not None:
                    title = doc[0] if doc else ""
                    yield title, doc[1:]
                    doc = None
                elif doc is not None:
                    doc.append(line.rstrip("\n"))
                elif line.strip():
                    raise StageError(f"{path} line {lineno} is neither wikiextractor JSON nor a <doc> "
                                     "block: is --input the output of extract?")
    except UnicodeDecodeError as exc:
        raise StageError(f"{path} is not UTF-8 text (bad byte at offset {exc.start}): "
                         "is --input the output of extract?") from None


def format_article(paragraphs: list[str]) -> list[str]:
    """Clean paragraphs of one article; headings ("## ..." lines) dropped."""
    out = []
    for p in paragraphs:
        if p.startswith("## "):
            continue
        cleaned = clean_paragraph(p)
        if cleaned:
            out.append(cleaned)
    return out


def _format_file(job: tuple) -> dict:
    src, dst = job
    docs = paragraphs = empty = 0
    chunks = []
    for _title, lines in read_articles(src):
        paras = format_article(lines)
        if not paras:
            empty += 1
            continue
        chunks.append("\n".join(paras) + "\n")
        docs += 1
        paragraphs += len(paras)
    info = {"documents": docs, "paragraphs": paragraphs, "empty": empty,
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
    out = Path(output) if output is not None else stage_dir(data_dir, lang, "format")
    if input is None:
        src_root = stage_dir(data_dir, lang, "extract")
        require_stage_output(src_root, "extract")
    else:
        src_root = Path(input)
    files = input_files(src_root)
    names = [output_name(f, src_root) for f in files]
    if len(set(names)) != len(names):
        raise StageError(f"input files under {src_root} map to the same output name: give a flat folder")
    run = StageRun("format", out, {}, fingerprint_inputs([src_root]), force=force)
    if run.complete:
        report("format", run.manifest["summary"], skipped=True)
        return run.manifest["summary"]
    started = time.time()
    remove_stale_temporaries(out)

    def done(name: str) -> bool:  # a marker, and its file unless the task wrote none
        return run.task_done(name) and (not run.task_info(name)["written"] or (out / name).is_file())

    todo = [(f, out / n) for f, n in zip(files, names) if not done(n)]
    for (src, dst), info in zip(todo, parallel_map(_format_file, todo, workers, desc="format", unit="file")):
        run.mark_done(dst.name, info)
    totals = {"documents": 0, "paragraphs": 0, "empty": 0, "input_bytes": 0, "bytes": 0}
    outputs = []
    for name in names:
        info = run.task_info(name)
        for k in totals:
            totals[k] += info[k]
        if info["written"]:
            outputs.append(out / name)
    if totals["documents"] == 0:
        raise StageError(f"no article text left in {src_root} after formatting: check the extract output")
    summary = {
        "documents": totals["documents"],
        "paragraphs": totals["paragraphs"],
        "files": len(outputs),
        "dropped": {"empty_articles": totals["empty"]},
        "input_bytes": totals["input_bytes"],
        "output_bytes": totals["bytes"],
        "seconds": round(time.time() - started, 2),
    }
    run.finish(summary, outputs)
    report("format", summary)
    return summary


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
