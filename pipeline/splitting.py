"""`pipeline split`: one sentence per line, a blank line between documents.

Hungarian (`--lang hu`) is split with quntoken (abbreviations such as "Dr.", "kb.", "stb."
and dates such as "2021. jan. 5-én" stay inside their sentence); every other language with
the rule-based splitter of pipeline/sentence_splitter.py. A paragraph (input line) always
ends a sentence. One task per input file, in parallel; file names are kept.

Usage:
    pipeline --lang hu split                       # formatted/ -> sentences/
    pipeline --lang uk split --input DIR --output DIR
    pipeline --lang hu split --splitter rules      # without quntoken

    split(data_dir="data", lang="uk", workers=2)   # the same from Python; returns the summary
"""
from __future__ import annotations

import functools
import logging
import time
from pathlib import Path

import click

from .cli_options import force_option
from .stage import StageRun, fingerprint_inputs, parallel_map, report, validate_lang
from .text_files import format_documents, out_name, read_utf8, resolve_io

SPLITTERS = ("auto", "quntoken", "rules")
QUNTOKEN_LANGS = {"hu"}
log = logging.getLogger("pipeline")


def resolve_splitter(lang: str, splitter: str) -> str:
    if splitter not in SPLITTERS:
        raise click.BadParameter(f"--splitter must be one of {', '.join(SPLITTERS)}")
    if splitter == "auto":
        return "quntoken" if lang in QUNTOKEN_LANGS else "rules"
    return splitter


def split_text(text: str, lang: str, splitter: str, name: str = "") -> tuple[str, int, int]:
    """Split formatted text (paragraph per line, blank line between documents).

    Returns the output text, its number of documents and of sentences.
    """
    per_line = None
    if splitter == "quntoken":
        from .quntoken_splitter import QuntokenMisaligned, split_paragraphs

        try:
            per_line = split_paragraphs(text)
        except QuntokenMisaligned as exc:  # never lose text: this file gets the rules instead
            log.warning("split: %s; %s is split with the rule-based splitter", exc, name or "a file")
    if per_line is None:
        from .sentence_splitter import SentenceSplitter

        rules = SentenceSplitter.for_language(lang)
        per_line = [rules.split(line) for line in text.split("\n")]
    docs: list[list[str]] = []
    doc: list[str] = []
    for line, sentences in zip(text.split("\n"), per_line):
        if not line.strip():
            if doc:
                docs.append(doc)
                doc = []
            continue
        doc.extend(sentences)
    if doc:
        docs.append(doc)
    return format_documents(docs), len(docs), sum(len(d) for d in docs)


def _split_file(task, lang: str, splitter: str, run: StageRun) -> dict:
    src, dst = task
    if run.task_done(dst.name):
        return run.task_info(dst.name)
    text = read_utf8(src)
    out, n_docs, n_sents = split_text(text, lang, splitter, src.name)
    data = out.encode("utf-8")
    from .stage import atomic_open

    with atomic_open(dst, "wb") as fh:
        fh.write(data)
    info = {"documents": n_docs, "sentences": n_sents, "input_bytes": src.stat().st_size,
            "output_bytes": len(data)}
    run.mark_done(dst.name, info)
    return info


def split(data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
          splitter="auto") -> dict:
    """Split the formatted text of `lang` into sentences; return the summary dict."""
    lang = validate_lang(lang)
    kind = resolve_splitter(lang, splitter)
    in_root, files, out_dir = resolve_io(data_dir, lang, input, output, "format", "split")
    run = StageRun("split", out_dir, {"lang": lang, "splitter": kind},
                   fingerprint_inputs([in_root if input is None else Path(input)]), force=force)
    if run.complete:
        report("split", run.manifest["summary"], skipped=True)
        return run.manifest["summary"]
    tasks = [(f, out_dir / out_name(in_root, f)) for f in files]
    names = [t[1].name for t in tasks]
    if len(set(names)) != len(names):
        raise click.UsageError(f"two input files map to the same output name under {in_root}")
    totals = {"files": len(tasks), "documents": 0, "sentences": 0, "input_bytes": 0, "output_bytes": 0}
    work = functools.partial(_split_file, lang=lang, splitter=kind, run=run)
    for info in parallel_map(work, tasks, workers, desc="split", unit="file"):
        for k in ("documents", "sentences", "input_bytes", "output_bytes"):
            totals[k] += info[k]
    totals["splitter"] = kind
    totals["seconds"] = round(time.time() - run.started, 2)
    run.finish(totals, outputs=[t[1] for t in tasks])
    report("split", totals)
    return totals




@click.command("split")
@click.option("--input", "input_", type=click.Path(exists=True, path_type=Path), default=None,
              help="Formatted text: a .txt file or a folder [default: DATA_DIR/LANG/formatted].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/sentences].")
@click.option("--splitter", type=click.Choice(SPLITTERS), default="auto", show_default=True,
              help="auto: quntoken for hu, the rule-based splitter for every other language.")
@force_option
@click.pass_obj
def command(g, input_, output, splitter, force):
    """Split formatted text into one sentence per line, a blank line between documents.

    Hungarian uses quntoken (abbreviations such as "kb.", dates such as "2021. jan. 5-én");
    every other language a rule-based splitter for Latin, Cyrillic, Greek, CJK, Indic,
    Arabic, Armenian, Ethiopic, Myanmar and Khmer punctuation, with per-language
    abbreviations from pipeline/languages/LANG.json. Each input line ends a sentence.
    """
    split(**g.kwargs(), input=input_, output=output, force=force, splitter=splitter)
