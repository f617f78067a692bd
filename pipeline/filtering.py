"""`pipeline filter`: keep the documents that look like real running text of the language.

TurkuNLP-style rules (pipeline/doc_filters.py) on each document's statistics: sentence and
word counts, words per sentence, share of sentences without a word, punctuation, upper-case,
digit and foreign-letter ratios, then langdetect (fixed seed) for the languages it knows;
for any other language the check is skipped with one warning. Every threshold is an option.
Defaults come from pipeline/languages/{lang}.json (hu has its own) or the generic ones; the
alphabet of a language without one is learned from the corpus itself (a first pass counting
letters). Rejections per reason go to OUTPUT/rejections.json and the summary line.
`--invert` writes the rejected documents instead (default folder DATA_DIR/LANG/rejected/),
with NAME.reasons.tsv beside each file saying why.

Usage:
    pipeline --lang hu filter                         # sentences/ -> filtered/
    pipeline --lang uk filter --max-digit-ratio 0.3 --min-words 20
    pipeline --lang hu filter --invert                # rejected/ for inspection
    filter_documents(data_dir="data", lang="uk", workers=2)   # from Python
"""
from __future__ import annotations

import functools
import logging
import time
from collections import Counter
from dataclasses import fields, replace
from pathlib import Path

import click

from . import language_id
from .doc_filters import (RULES, DocStats, FilterSettings, alphabet_from_text, first_failure,
                          learn_alphabet, letter_counts)
from .language_settings import language_settings
from .cli_options import force_option
from .stage import (StageRun, atomic_open, fingerprint_inputs, lang_dir, parallel_map, report,
                    validate_lang, write_json_atomic)
from .text_files import documents, format_documents, out_name, read_utf8, resolve_io

log = logging.getLogger("pipeline")

REJECTIONS = "rejections.json"
THRESHOLDS = [f.name for f in fields(FilterSettings) if f.name != "alphabet"]


def default_settings(lang: str) -> FilterSettings:
    """The filter defaults of `lang`: generic ones, updated by its languages/{lang}.json."""
    own = dict(language_settings(lang)["filter"])
    alphabet = own.pop("alphabet", None)
    fs = replace(FilterSettings(), **{k: v for k, v in own.items() if k in THRESHOLDS})
    if alphabet is not None:
        fs = replace(fs, alphabet=alphabet_from_text(alphabet))
    return fs


def _count_letters(path: Path) -> Counter:
    return letter_counts(read_utf8(path))


def _filter_file(task, settings: FilterSettings, lang_codes, invert: bool, run: StageRun) -> dict:
    src, dst = task
    if run.task_done(dst.name):
        return run.task_info(dst.name)
    kept, dropped, reasons_tsv = [], [], []
    reasons = Counter()
    n_docs = 0
    for i, doc in enumerate(documents(read_utf8(src))):
        n_docs += 1
        reason = first_failure(DocStats.of(doc, settings.alphabet), settings)
        if reason is None and lang_codes and settings.min_lang_prob > 0:
            prob = language_prob(" ".join(doc), lang_codes)
            if prob is not None and prob < settings.min_lang_prob:
                reason = "language"
        if reason is None:
            kept.append(doc)
        else:
            reasons[reason] += 1
            dropped.append(doc)
            reasons_tsv.append(f"{i}\t{reason}\t{doc[0][:100]}\n")
    data = format_documents(dropped if invert else kept).encode("utf-8")
    if invert:
        with atomic_open(dst.with_name(dst.stem + ".reasons.tsv")) as fh:
            fh.writelines(reasons_tsv)
    with atomic_open(dst, "wb") as fh:
        fh.write(data)
    info = {"documents": n_docs, "kept": len(kept), "rejected": len(dropped),
            "sentences": sum(map(len, dropped if invert else kept)),  # the ones written
            "reasons": dict(reasons), "input_bytes": src.stat().st_size, "output_bytes": len(data)}
    run.mark_done(dst.name, info)
    return info


def language_prob(text, codes):
    return language_id.language_prob(text, codes)


def filter_documents(data_dir="data", lang="hu", workers=None, input=None, output=None,
                     force=False, invert=False, alphabet=None, language_check=True,
                     **thresholds) -> dict:
    """Filter the sentence files of `lang`; return the summary dict.

    `alphabet`: letters of the language as a string; None takes the language file's or learns
    it from the input. `thresholds`: any FilterSettings field (min_words=..., ...).
    """
    lang = validate_lang(lang)
    unknown = set(thresholds) - set(THRESHOLDS)
    if unknown:
        raise TypeError(f"unknown filter thresholds: {', '.join(sorted(unknown))}")
    if output is None and invert:
        output = lang_dir(data_dir, lang) / "rejected"
    in_root, files, out_dir = resolve_io(data_dir, lang, input, output, "split", "filter")
    settings = default_settings(lang)
    settings = replace(settings, **{k: v for k, v in thresholds.items() if v is not None})
    if alphabet:
        settings = replace(settings, alphabet=alphabet_from_text(alphabet))
    alphabet_source = "option" if alphabet else ("language file" if settings.alphabet else "learned")

    lang_codes = language_id.langdetect_codes(lang) if language_check else None
    options = {"lang": lang, "invert": invert, "language_check": language_check,
               **settings.as_options()}
    run = StageRun("filter", out_dir, options,
                   fingerprint_inputs([in_root if input is None else Path(input)]), force=force)
    if run.complete:
        report("filter", run.manifest["summary"], skipped=True)
        return run.manifest["summary"]

    if language_check and lang_codes is None:
        log.warning("filter: langdetect does not know %r (it knows 55 languages); "
                    "the language check is skipped", lang)
    if lang_codes and settings.min_lang_prob > 0:
        language_id.prepare()  # load the profiles once, before the workers fork
    if settings.alphabet is None:
        counts = Counter()
        for c in parallel_map(_count_letters, files, workers, desc="filter: alphabet", unit="file"):
            counts.update(c)
        settings = replace(settings, alphabet=learn_alphabet(counts))

    tasks = [(f, out_dir / out_name(in_root, f)) for f in files]
    work = functools.partial(_filter_file, settings=settings, lang_codes=lang_codes,
                             invert=invert, run=run)
    totals = {"files": len(tasks), "documents": 0, "kept": 0, "rejected": 0, "sentences": 0,
              "input_bytes": 0, "output_bytes": 0}
    reasons = Counter()
    for info in parallel_map(work, tasks, workers, desc="filter", unit="file"):
        for k in ("documents", "kept", "rejected", "sentences", "input_bytes", "output_bytes"):
            totals[k] += info[k]
        reasons.update(info["reasons"])
    totals["rejections"] = {r: reasons[r] for r in RULES if reasons[r]}
    totals["language_check"] = ("skipped (unknown to langdetect)" if language_check and lang_codes is None
                                else "on" if language_check and settings.min_lang_prob > 0 else "off")
    totals["seconds"] = round(time.time() - run.started, 2)
    write_json_atomic(out_dir / REJECTIONS, {
        "documents": totals["documents"], "kept": totals["kept"], "rejected": totals["rejected"],
        "reasons": totals["rejections"], "alphabet": "".join(sorted(settings.alphabet)),
        "alphabet_source": alphabet_source, "settings": settings.as_options(),
    })
    outputs = [t[1] for t in tasks]
    if invert:
        outputs += [d.with_name(d.stem + ".reasons.tsv") for d in outputs]
    run.finish(totals, outputs=outputs + [out_dir / REJECTIONS])
    report("filter", totals)
    return totals


THRESHOLD_HELP = {
    "min_sentences": "Fewest sentences in a document.",
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
                                 "pipeline/languages/LANG.json sets it]")(func)
    return func


@click.command("filter")
@click.option("--input", "input_", type=click.Path(exists=True, path_type=Path), default=None,
              help="Sentence files: a .txt file or a folder [default: DATA_DIR/LANG/sentences].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: DATA_DIR/LANG/filtered, with --invert .../rejected].")
@click.option("--invert", is_flag=True, help="Write the rejected documents instead, for inspection.")
@click.option("--alphabet", default=None,
              help="Letters of the language [default: the language file's, else learned from the input].")
@click.option("--language-check/--no-language-check", default=True, show_default=True,
              help="Reject documents langdetect does not find in --lang (skipped for languages it does not know).")
@_threshold_options
@force_option
@click.pass_obj
def command(g, input_, output, invert, alphabet, language_check, force, **thresholds):
    """Drop documents that are not running text of the language (TurkuNLP-style rules).

    Counts per rejection reason go to OUTPUT/rejections.json and the summary line;
    --invert writes the rejected documents (and NAME.reasons.tsv) for inspection.
    """
    filter_documents(**g.kwargs(), input=input_, output=output, force=force, invert=invert,
                     alphabet=alphabet, language_check=language_check, **thresholds)
