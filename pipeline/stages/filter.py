"""`pipeline filter`: keep the documents that look like real running text of the language.

TurkuNLP-style rules (pipeline/text/doc_rules.py) on each document's statistics: sentence and
word counts, words per sentence, share of sentences without a word, punctuation, upper-case,
digit and foreign-letter ratios, then langdetect (fixed seed) for the languages it knows;
for any other language the check is skipped with one warning. Every threshold is an option.
Defaults come from pipeline/text/languages/{lang}.json (hu has its own) or the generic ones; the
alphabet of a language without one is learned from the corpus itself (a first pass counting
letters). Before the rules, lines (over 20 characters) that repeat an earlier line of the
corpus go (boilerplate copied into many articles; pipeline/text/repeats.py: the first copy in
document order stays, memory bounded per task; --keep-repeats switches it off); with
--drop-unbalanced, so do lines whose brackets or quotes still do not balance (format has
removed the brackets that match nothing; what is left is mostly quotations longer than the
split bound; pipeline/text/brackets.py); one-sentence
documents are rejected by default (--min-sentences 1 keeps them). Words in scripts without
spaces are the words of the language's segmenter (ja mecab, zh jieba, th pythainlp;
--word-segmenter overrides, `none` counts characters). Rejections per reason, most
frequent first, go to OUTPUT/rejections.json and the summary line.
`--invert` writes the rejected documents instead (default folder DATA_DIR/LANG/rejected/),
with NAME.reasons.tsv beside each file saying why.

Usage:
    pipeline --lang hu filter                         # sentences/ -> filtered/
    pipeline --lang uk filter --max-digit-ratio 0.3 --min-words 20
    pipeline --lang hu filter --invert                # rejected/ for inspection
    filter_documents(data_dir="data", lang="uk", workers=2)   # from Python
"""
from __future__ import annotations

import contextlib
import functools
import logging
from collections import Counter
from dataclasses import replace
from pathlib import Path

import click

from common.atomic import atomic_open, write_json_atomic
from pipeline.core.errors import StageError
from pipeline.core.inputs import text_io
from pipeline.core.manifest import fingerprint_inputs
from pipeline.core.options import force_option
from pipeline.core.registry import lang_dir, validate_lang
from pipeline.core.runner import StageRun, Task
from pipeline.text import language_id, repeats
from pipeline.text.brackets import unbalanced
from pipeline.text.doc_rules import (
    THRESHOLDS,
    DocStats,
    FilterSettings,
    alphabet_from_text,
    default_settings,
    first_failure,
    learn_alphabet,
    letter_counts,
)
from pipeline.text.documents import PIECE_CHARS, read_documents, read_pieces
from pipeline.text.language_settings import word_segmenter as language_segmenter
from pipeline.text.versions import library_versions, stage_rules
from vocab.core.segmenters import CHOICES as SEGMENTER_CHOICES
from vocab.core.segmenters import SegmenterError, load_segmenter

log = logging.getLogger("pipeline")

REJECTIONS = "rejections.json"
EXAMPLES_PER_REASON = 5   # first lines of rejected documents kept in rejections.json (`pipeline report`)


def scan_task(job: tuple[int, Path], work: Path | None, partitions: int, letters: bool) -> Counter | None:
    """First pass over one file: its line hashes for the repeat search (when `work` is given),
    its letter counts for a learned alphabet (when `letters`)."""
    index, path = job
    counts, read = Counter(), []

    def pieces():   # the file a piece at a time: memory of a piece, whatever the file's size
        read.append(True)
        for piece in read_pieces(path, PIECE_CHARS):
            if letters:
                counts.update(letter_counts(piece))
            yield piece

    if work is not None:
        repeats.scan_file(pieces(), index, work, partitions)
    if letters and not read:   # no repeat scan, or it was done before this run
        for _piece in pieces():
            pass
    return counts if letters else None


def _segment_words(name: str | None):
    """text -> words of the segmenter `name` (None: none); a failure names the package."""
    if name is None:
        return None

    try:
        return load_segmenter(name).words
    except SegmenterError as exc:
        raise StageError(str(exc)) from None


def _doc_stats(doc: list[str], settings: FilterSettings, segment, src: Path) -> DocStats:
    try:
        return DocStats.of(doc, settings.alphabet, segment)
    except StageError:
        raise
    except Exception as exc:   # the segmenter's own failure: say on which document
        raise StageError(f"{src}: the word segmenter failed ({exc!r}) on the document that "
                         f"starts {doc[0][:60]!r}") from None


def filter_file(job: tuple[Path, Path, int], settings: FilterSettings, lang_codes, invert: bool,
                repeat_dir: Path | None = None, partitions: int = 1, drop_unbalanced: bool = False,
                word_segmenter: str | None = None) -> dict:
    """One task: the documents of one sentence file without their repeated (and, with
    drop_unbalanced, unbalanced) lines, kept (or with invert, rejected) ones written; read,
    judged and written PIECE_CHARS of documents at a time (memory of a piece, not of the file)."""
    src, dst, index = job
    segment = _segment_words(word_segmenter)
    repeated = repeats.repeated_lines(index, repeat_dir, partitions) if repeat_dir is not None else ()
    reasons = Counter()
    examples: dict[str, list[str]] = {}
    n = Counter()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(atomic_open(dst, "wb"))
        tsv = stack.enter_context(atomic_open(reasons_file(dst))) if invert else None   # in place first
        for batch in _batches(read_documents(src), PIECE_CHARS):
            docs, doc_reasons = [], []
            for doc in batch:
                if repeated:
                    own = [line for j, line in enumerate(doc, n["lines"]) if j not in repeated]
                    n["repeated_lines"] += len(doc) - len(own)
                    n["lines"] += len(doc)
                    doc = own
                if drop_unbalanced:
                    own = [line for line in doc if not unbalanced(line)]
                    n["unbalanced_lines"] += len(doc) - len(own)
                    doc = own
                docs.append(doc)
                doc_reasons.append(first_failure(_doc_stats(doc, settings, segment, src), settings) if doc
                                   else "too_few_sentences")
            _check_language(docs, doc_reasons, settings, lang_codes)
            for doc, reason in zip(docs, doc_reasons):
                n["documents"] += 1
                if reason is not None:
                    reasons[reason] += 1
                    if tsv:
                        tsv.write(f"{n['documents'] - 1}\t{reason}\t{doc[0][:100] if doc else ''}\n")
                    if doc and len(examples.setdefault(reason, [])) < EXAMPLES_PER_REASON:
                        examples[reason].append(" / ".join(doc[:2])[:300])
                n["kept" if reason is None else "rejected"] += 1
                if (reason is None) != invert:   # written: format_documents' bytes, a document at a time
                    n["sentences"] += len(doc)
                    if doc:
                        data = (b"\n\n" if n["output_bytes"] else b"") + "\n".join(doc).encode("utf-8")
                        out.write(data)
                        n["output_bytes"] += len(data)
        if n["output_bytes"]:
            out.write(b"\n")
            n["output_bytes"] += 1
    return {**{k: n[k] for k in ("documents", "kept", "rejected", "sentences", "repeated_lines",
                                 "unbalanced_lines")},
            "reasons": dict(reasons), "examples": examples, "input_bytes": src.stat().st_size,
            "output_bytes": n["output_bytes"]}


def _batches(docs, chars: int):
    """Lists of documents of about `chars` characters each."""
    batch, size = [], 0
    for doc in docs:
        batch.append(doc)
        size += sum(map(len, doc))
        if size >= chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _check_language(docs, doc_reasons: list, settings: FilterSettings, lang_codes) -> None:
    """langdetect on the documents the rules kept, many at a time (the same numbers): "language"
    where the language's share is under settings.min_lang_prob."""
    if lang_codes and settings.min_lang_prob > 0:
        ask = [i for i, r in enumerate(doc_reasons) if r is None]
        probs = language_id.language_probs([" ".join(docs[i]) for i in ask], lang_codes)
        for i, prob in zip(ask, probs):
            if prob is not None and prob < settings.min_lang_prob:
                doc_reasons[i] = "language"


def reasons_file(dst: Path) -> Path:
    """NAME.reasons.tsv beside an --invert output file."""
    return dst.with_name(dst.stem + ".reasons.tsv")


def filter_documents(data_dir="data", lang="hu", workers=None, input=None, output=None,
                     force=False, invert=False, alphabet=None, language_check=True,
                     drop_repeats=True, drop_unbalanced=False, word_segmenter=None,
                     **thresholds) -> dict:
    """Filter the sentence files of `lang`; return the summary dict.

    `alphabet`: letters of the language as a string; None takes the language file's or learns
    it from the input. `thresholds`: any FilterSettings field (min_words=..., ...).
    `word_segmenter`: mecab, jieba, pythainlp or none [default: the language's].
    """
    lang = validate_lang(lang)
    segmenter = language_segmenter(lang, word_segmenter)
    _segment_words(segmenter)   # a missing package: one line, before any work
    settings, alphabet_source = _settings(lang, alphabet, thresholds)
    if output is None and invert:
        output = lang_dir(data_dir, lang) / "rejected"
    io = text_io(data_dir, lang, "filter", input, output)
    lang_codes = language_id.langdetect_codes(lang) if language_check else None
    options = {"lang": lang, "invert": invert, "language_check": language_check,
               "drop_repeats": drop_repeats, "drop_unbalanced": drop_unbalanced, **settings.as_options()}
    if segmenter is not None:   # only then: other languages' manifests stay as they were
        options["word_segmenter"] = segmenter
    run = StageRun("filter", io.output, options, fingerprint_inputs([io.source]), force=force,
                   workers=workers, expected_bytes=io.input_bytes(), rules=stage_rules("filter"))
    if run.complete:
        return run.skip()

    _prepare_language_check(lang, language_check, lang_codes, settings)
    pairs = io.tasks_out()
    repeat_dir = run.work_dir if drop_repeats else None
    partitions = repeats.partitions_for(sum(src.stat().st_size for src, _ in pairs))
    settings = _first_pass(run, [src for src, _ in pairs], settings, repeat_dir, partitions)
    tasks = [Task(dst.name, (src, dst, index), outputs=(dst,) + ((reasons_file(dst),) if invert else ()))
             for index, (src, dst) in enumerate(pairs)]
    work = functools.partial(filter_file, settings=settings, lang_codes=lang_codes, invert=invert,
                             repeat_dir=repeat_dir, partitions=partitions, drop_unbalanced=drop_unbalanced,
                             word_segmenter=segmenter)
    totals, examples = _filter_files(run, tasks, work)
    totals["language_check"] = ("skipped (unknown to langdetect)" if language_check and lang_codes is None
                                else "on" if language_check and settings.min_lang_prob > 0 else "off")
    totals["seconds"] = run.seconds()
    _write_rejections(io.output / REJECTIONS, totals, examples, settings, alphabet_source)
    outputs = [f for t in tasks for f in t.outputs[:1]]
    if invert:
        outputs += [reasons_file(d) for d in outputs]
    return run.finish(totals, outputs=outputs + [io.output / REJECTIONS],
                      extra={"libraries": library_versions("filter")})


def _settings(lang: str, alphabet: str | None, thresholds: dict) -> tuple[FilterSettings, str]:
    """The language's settings with the options over them, and where the alphabet comes from
    (the option, the language file, or learned from the input by the first pass)."""
    unknown = set(thresholds) - set(THRESHOLDS)
    if unknown:
        raise TypeError(f"unknown filter thresholds: {', '.join(sorted(unknown))}")
    settings = default_settings(lang)
    settings = replace(settings, **{k: v for k, v in thresholds.items() if v is not None})
    if alphabet:
        settings = replace(settings, alphabet=alphabet_from_text(alphabet))
    alphabet_source = "option" if alphabet else ("language file" if settings.alphabet else "learned")
    return settings, alphabet_source


def _prepare_language_check(lang: str, language_check: bool, lang_codes, settings: FilterSettings) -> None:
    """Say when langdetect cannot check `lang`; otherwise load its profiles before the fork."""
    if language_check and lang_codes is None:
        log.warning("filter: langdetect does not know %r (it knows 55 languages); "
                    "the language check is skipped", lang)
    if lang_codes and settings.min_lang_prob > 0:
        language_id.prepare()  # load the profiles once, before the workers fork


def _first_pass(run: StageRun, sources: list[Path], settings: FilterSettings, repeat_dir: Path | None,
                partitions: int) -> FilterSettings:
    """The pass before filtering, when needed: the line hashes of the repeat search (then the
    search) and the letter counts of a learned alphabet; returns the settings with it."""
    learn = settings.alphabet is None
    if learn or repeat_dir is not None:
        counts = Counter()
        scan = functools.partial(scan_task, work=repeat_dir, partitions=partitions, letters=learn)
        for c in run.map(scan, list(enumerate(sources)), desc="filter: scan", unit="file"):
            counts.update(c or {})
        if learn:
            settings = replace(settings, alphabet=learn_alphabet(counts))
    if repeat_dir is not None:
        find = functools.partial(repeats.find_repeats, n_files=len(sources), work=repeat_dir)
        list(run.map(find, range(partitions), desc="filter: repeats", unit="part"))
    return settings


def _filter_files(run: StageRun, tasks: list[Task], work) -> tuple[dict, dict[str, list[str]]]:
    """Run the filter tasks; (the summed counts, the first rejected lines per reason)."""
    totals = {"files": len(tasks), "documents": 0, "kept": 0, "rejected": 0, "sentences": 0,
              "input_bytes": 0, "output_bytes": 0}
    reasons = Counter()
    examples: dict[str, list[str]] = {}
    repeated = unbalanced_lines = 0
    for _task, info in run.run_tasks(tasks, work, desc="filter", unit="file"):
        for k in ("documents", "kept", "rejected", "sentences", "input_bytes", "output_bytes"):
            totals[k] += info[k]
        repeated += info.get("repeated_lines", 0)
        unbalanced_lines += info.get("unbalanced_lines", 0)
        reasons.update(info["reasons"])
        for reason, lines in info.get("examples", {}).items():
            kept = examples.setdefault(reason, [])
            kept.extend(lines[:EXAMPLES_PER_REASON - len(kept)])
    totals["rejections"] = {r: reasons[r] for r, _ in reasons.most_common()}
    totals["repeated_lines"] = repeated
    totals["unbalanced_lines"] = unbalanced_lines
    return totals, examples


def _write_rejections(path: Path, totals: dict, examples: dict, settings: FilterSettings,
                      alphabet_source: str) -> None:
    """rejections.json: the counts per reason, examples of each and the settings that gave them."""
    write_json_atomic(path, {
        "documents": totals["documents"], "kept": totals["kept"], "rejected": totals["rejected"],
        "reasons": totals["rejections"], "repeated_lines": totals["repeated_lines"],
        "unbalanced_lines": totals["unbalanced_lines"], "examples": examples,
        "alphabet": "".join(sorted(settings.alphabet)),
        "alphabet_source": alphabet_source, "settings": settings.as_options(),
    })


THRESHOLD_HELP = {
    "min_sentences": "Fewest sentences in a document (1 keeps one-sentence stubs).",
    "min_words": "Fewest words in a document (CJK/Thai: characters).",
    "min_words_per_sentence": "Lowest average words per sentence.",
    "max_words_per_sentence": "Highest average words per sentence.",
    "max_no_word_ratio": "Highest share of sentences without a letter.",
    "max_punct_ratio": "Highest punctuation / non-space characters.",
    "max_upper_ratio": "Highest upper-case / cased letters.",
    "min_cased_for_upper": "Cased letters a document needs before the upper-case rule applies.",
    "max_digit_ratio": "Highest digits / non-space characters.",
    "max_foreign_ratio": "Highest share of letters outside the alphabet.",
    "min_lang_prob": "Lowest langdetect probability of --lang (0 turns the check off).",
}


def _threshold_options(func):
    """One CLI option per threshold: --min-words, --max-digit-ratio, ..."""
    defaults = FilterSettings()
    for name in reversed(THRESHOLDS):
        default = getattr(defaults, name)
        if isinstance(default, int):
            kind = click.IntRange(min=0)
        elif name.endswith("_ratio") or name == "min_lang_prob":
            kind = click.FloatRange(0, 1)  # shares and probabilities
        else:
            kind = click.FloatRange(min=0)
        func = click.option(f"--{name.replace('_', '-')}", name, type=kind, default=None,
                            help=f"{THRESHOLD_HELP[name]} [default: {default}, unless "
                                 "pipeline/text/languages/LANG.json sets it]")(func)
    return func


@click.command("filter")
@click.option("--input", "input_", type=click.Path(exists=True, path_type=Path), default=None,
              help="Sentence files: a .txt file or a folder [default: DATA_DIR/LANG/sentences].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/filtered, with --invert .../rejected].")
@click.option("--invert", is_flag=True, help="Write the rejected documents instead, for inspection.")
@click.option("--alphabet", default=None,
              help="Letters of the language [default: the language file's, else learned from the input].")
@click.option("--drop-repeats/--keep-repeats", default=True, show_default=True,
              help="Drop lines (over 20 characters) that repeat an earlier line of the corpus.")
@click.option("--drop-unbalanced/--keep-unbalanced", default=False, show_default=True,
              help="Drop lines whose brackets or quotes do not balance (for a strict corpus).")
@click.option("--language-check/--no-language-check", default=True, show_default=True,
              help="Reject documents langdetect does not find in --lang (skipped for languages it does not know).")
@click.option("--word-segmenter", type=click.Choice(SEGMENTER_CHOICES),
              default=None, help="Words of a script without spaces [default: the language's: ja "
                                 "mecab, zh jieba, th pythainlp]; none: one character, one word.")
@_threshold_options
@force_option
@click.pass_obj
def command(g, input_, output, invert, alphabet, drop_repeats, drop_unbalanced, language_check, force,
            word_segmenter, **thresholds):
    """Drop documents that are not running text of the language (TurkuNLP-style rules).

    Counts per rejection reason go to OUTPUT/rejections.json and the summary line;
    --invert writes the rejected documents (and NAME.reasons.tsv) for inspection.
    """
    filter_documents(**g.kwargs(), input=input_, output=output, force=force, invert=invert,
                     alphabet=alphabet, language_check=language_check, drop_repeats=drop_repeats,
                     drop_unbalanced=drop_unbalanced, word_segmenter=word_segmenter,
                     **thresholds)
