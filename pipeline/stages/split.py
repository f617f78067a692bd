"""`pipeline split`: one sentence per line, a blank line between documents.

Hungarian (`--lang hu`) is split with quntoken (abbreviations such as "Dr.", "kb.", "stb."
and dates such as "2021. jan. 5-én" stay inside their sentence); every other language with
the rule-based splitter of pipeline/text/sentence_rules.py, with the language file's
abbreviations and those learned from the first MB of the input (Punkt's statistics,
pipeline/text/abbreviations.py; listed in the manifest). No sentence ends inside brackets or
quotes. A paragraph (input line) always ends a sentence. One task per input file, in
parallel, reading it a few MB of whole documents at a time (memory does not grow with a file:
ingest's web parts are 64 MB); file names are kept.

Usage:
    pipeline --lang hu split                       # formatted/ -> sentences/
    pipeline --lang uk split --input DIR --output DIR
    pipeline --lang hu split --splitter rules      # without quntoken

    split(data_dir="data", lang="uk", workers=2)   # the same from Python; returns the summary
"""
from __future__ import annotations

import functools
from pathlib import Path

import click

from common.atomic import atomic_open
from pipeline.core.inputs import text_io
from pipeline.core.manifest import fingerprint_inputs
from pipeline.core.options import force_option
from pipeline.core.registry import validate_lang
from pipeline.core.runner import StageRun, Task
from pipeline.text.abbreviations import learn_abbreviations
from pipeline.text.documents import PIECE_CHARS, read_pieces
from pipeline.text.splitting import SPLITTERS, resolve_splitter, split_text
from pipeline.text.versions import library_versions, stage_rules

ABBREVIATION_SAMPLE_BYTES = 1_000_000  # characters, in fact: enough for an abbreviation seen 3 times


def split_file(job: tuple[Path, Path], lang: str, splitter: str, learned: frozenset = frozenset()) -> dict:
    """One task: one formatted file into one file of sentences, PIECE_CHARS of whole documents
    at a time (the same bytes as the file at once: documents are split one by one)."""
    src, dst = job
    n_docs = n_sents = n_bytes = 0
    with atomic_open(dst, "wb") as fh:
        for piece in read_pieces(src, PIECE_CHARS):
            out, docs, sents = split_text(piece, lang, splitter, src.name, learned)
            if out:
                data = (b"\n" if n_docs else b"") + out.encode("utf-8")   # the blank line between documents
                fh.write(data)
                n_docs, n_sents, n_bytes = n_docs + docs, n_sents + sents, n_bytes + len(data)
    return {"documents": n_docs, "sentences": n_sents, "input_bytes": src.stat().st_size, "output_bytes": n_bytes}


def split(data_dir="data", lang="hu", workers=None, input=None, output=None, force=False,
          splitter="auto") -> dict:
    """Split the formatted text of `lang` into sentences; return the summary dict."""
    lang = validate_lang(lang)
    kind = resolve_splitter(lang, splitter)
    io = text_io(data_dir, lang, "split", input, output)
    run = StageRun("split", io.output, {"lang": lang, "splitter": kind},
                   fingerprint_inputs([io.source]), force=force, workers=workers,
                   expected_bytes=io.input_bytes() * 21 // 20,   # + a newline per sentence
                   rules=stage_rules("split"))
    if run.complete:
        return run.skip()
    tasks = [Task(dst.name, (src, dst), outputs=(dst,)) for src, dst in io.tasks_out()]
    totals = {"files": len(tasks), "documents": 0, "sentences": 0, "input_bytes": 0, "output_bytes": 0}
    learned = learn_from_sample(io.files) if kind == "rules" else frozenset()
    work = functools.partial(split_file, lang=lang, splitter=kind, learned=learned)
    for _task, info in run.run_tasks(tasks, work, desc="split", unit="file"):
        for k in ("documents", "sentences", "input_bytes", "output_bytes"):
            totals[k] += info[k]
    totals["splitter"] = kind
    totals["seconds"] = run.seconds()
    return run.finish(totals, outputs=[t.outputs[0] for t in tasks],
                      extra={"learned_abbreviations": sorted(learned),
                             "libraries": library_versions("split")})


def learn_from_sample(files: list[Path]) -> frozenset[str]:
    """Abbreviations learned from the first ABBREVIATION_SAMPLE_BYTES of the input, in file
    order: the same set whatever --workers, at a cost that does not grow with the corpus."""
    sample, size = [], 0
    for path in files:
        if size >= ABBREVIATION_SAMPLE_BYTES:
            break
        text = next(read_pieces(path, ABBREVIATION_SAMPLE_BYTES - size), "")[:ABBREVIATION_SAMPLE_BYTES - size]
        sample.append(text)
        size += len(text)
    return learn_abbreviations("\n".join(sample))


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
    abbreviations from pipeline/text/languages/LANG.json. Each input line ends a sentence.
    """
    split(**g.kwargs(), input=input_, output=output, force=force, splitter=splitter)
