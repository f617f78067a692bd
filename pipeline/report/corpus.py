"""Section `quality`: the text-quality measures of the corpus (pipeline/text/quality.py, the
ones `bench/bench_text_quality.py` prints) against their goals, with offending lines, and the
histograms of sentence length and sentences per document of a sample of filtered/ (words of
scripts without spaces are the language's segmenter words, as the filter counts them).
"""
from __future__ import annotations

from pipeline.text.doc_rules import count_words
from pipeline.text.language_settings import word_segmenter
from pipeline.text.quality import MEASURES, measure_corpus
from vocab.core.segmenters import SegmenterError, load_segmenter

from .figures import bar_chart, histogram
from .inputs import ReportInputs, sample_documents
from .page import Section, esc, num, percent, table, text_list

QUALITY_BYTES = 20_000_000   # text read per folder for the measures (the first files): seconds


def shown_value(value: float, unit: str) -> str:
    return percent(value, 2) if unit == "share" else f"{value:.1f} per 10k lines"


def _measures(sec: Section, data: ReportInputs, lang: str) -> None:
    result = measure_corpus(data.lang_dir, max_bytes=QUALITY_BYTES)
    measures = result.get("measures") or {}
    if not measures:
        sec.note("No filtered/ output to measure yet.")
        return
    rows = [("measure", "value", "goal", "")]
    bad_rows, labels, ratios, flags = set(), [], [], []
    for m in MEASURES:
        if m.key not in measures:
            continue
        value = measures[m.key]
        bad = value > m.goal if m.worse == "above" else value < m.goal
        if bad:
            bad_rows.add(len(rows) - 1)
            sec.warn(f"{m.label}: {shown_value(value, m.unit)} (goal {shown_value(m.goal, m.unit)})")
        rows.append((m.label, shown_value(value, m.unit), shown_value(m.goal, m.unit),
                     "missed" if bad else "ok"))
        labels.append(m.key)
        ratios.append(value / m.goal if m.goal else 0.0)
        flags.append(bad)
    sec.add(f"<p>Measured on {num(result.get('lines'))} lines in {num(result.get('documents'))} "
            f"documents of filtered/ (the first {QUALITY_BYTES // 1_000_000} MB).</p>")
    sec.add(bar_chart(labels, ratios, title="Each measure as a multiple of its goal (red: missed)",
                      xlabel="value / goal (dashed line: the goal)", bad=flags, fmt="{:.2f}",
                      limit=1.0))
    sec.add(table(rows, numeric={1, 2}, bad_rows=bad_rows))
    examples = result.get("examples") or {}
    for m in MEASURES:
        lines = examples.get(m.key)
        if lines and m.key in measures:
            sec.add(f"<h3>{esc(m.label)}</h3>", text_list(lines, lang))


def _bins(top: int) -> list[int]:
    """Integer bin edges from 0 to `top` (inclusive), at most about 75 bins."""
    step = max(1, -(-(top + 1) // 75))
    return list(range(0, top + step + 1, step))


def _segmenter(lang: str):
    """(name, text -> words) of the language's word segmenter, or (None, None) when it has
    none or its package is missing (then characters are counted, and the axis says so)."""
    name = word_segmenter(lang)
    if name is None:
        return None, None

    try:
        return name, load_segmenter(name).words
    except SegmenterError:
        return None, None


def _histograms(sec: Section, data: ReportInputs, lang: str) -> None:
    stage = "filter" if data.manifest("filter") else "split" if data.manifest("split") else None
    if stage is None:
        return
    docs = sample_documents(data.folder(stage))
    if not docs:
        return
    seg_name, segment = _segmenter(lang)
    lengths = [count_words(s, segment=segment) for d in docs for s in d]
    per_doc = [len(d) for d in docs]
    sec.add(f"<p>Histograms of a sample of {num(len(docs))} documents "
            f"({num(len(lengths))} sentences) of {data.folder(stage).name}/.</p>")
    top = max(lengths)
    cut = min(150, top)
    sec.add(histogram([min(n, cut) for n in lengths], bins=_bins(cut),
                      title=f"Words per sentence (longest {top}" + (", shown at 150)" if top > cut else ")"),
                      xlabel=(f"words ({seg_name} words)" if seg_name
                              else "words (CJK/Thai: characters)"), ylabel="sentences",
                      marks={"1 word": 1}))
    one = sum(1 for n in lengths if n <= 1) / len(lengths)
    if one > 0.05:
        sec.warn(f"{percent(one)} of the sampled sentences have at most one word: "
                 "headings, list items or a splitter cutting too often")
    cut = min(200, max(per_doc))
    sec.add(histogram([min(n, cut) for n in per_doc], bins=_bins(cut),
                      title="Sentences per document" + (" (more than 200 shown at 200)"
                                                        if max(per_doc) > cut else ""),
                      xlabel="sentences", ylabel="documents"))


def quality_section(data: ReportInputs, lang: str) -> Section:
    sec = Section("quality", "Corpus quality")
    _measures(sec, data, lang)
    _histograms(sec, data, lang)
    return sec
