"""Section `vocab`: the vocab's size and quality on held-out text ([UNK] share, subwords per
word), a few sentences as the model will see them, the longest pieces, and the vocab's
characters by script.

Reads vocab/vocab_report.json and vocab.txt; tokenizes a few held-out sentences with the
tokenizer encode uses (its kind's words and pieces, vocab/kinds).
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict

from pipeline.text.doc_rules import script_of
from vocab.core.layout import VocabError
from vocab.core.segmenters import SegmenterError
from vocab.kinds import load_tokenizer
from vocab.reports.quality import MIN_EVAL_SENTENCES, too_small_message

from .figures import bar_chart, histogram
from .fonts import missing_scripts
from .inputs import ReportInputs, sample_documents
from .page import Section, esc, num, percent, table

REPORT = "vocab_report.json"     # written by the vocab stage
UNK_WORD_LIMIT = 0.001           # ordinary words should never become [UNK]
SHOWN_SENTENCES = 6
MEASURED_SENTENCES = 2000


def _sentences(data: ReportInputs) -> list[str]:
    """Held-out sentences (the test shards) when there are some, else filtered ones."""
    if data.manifest("shard"):
        docs = sample_documents(data.folder("shard"), max_docs=200, pattern="*_test_*.txt")
    else:
        docs = sample_documents(data.folder("filter"), max_docs=200) if data.manifest("filter") else []
    return [s for d in docs for s in d][:MEASURED_SENTENCES]


def _pieces_html(pieces: list[str], lang: str) -> str:
    spans = "\u200b".join(f'<span class="piece">{esc(p)}</span>' for p in pieces)  # may wrap there
    return f'<li lang="{esc(lang)}">{spans}</li>'


def _quality_table(sec: Section, rep: dict, lang: str) -> None:
    rows = [("figure", "value"),
            ("vocab size", num(rep.get("vocab_size"))),
            ("case", ("lower-cased" if rep.get("lower_case") else "cased")
             + (", accents stripped" if rep.get("strip_accents") else "")),
            ("held-out text", rep.get("eval_source") or "-"),
            ("held-out sentences / words", f"{num(rep.get('sentences'))} / {num(rep.get('words'))}"),
            ("[UNK] share of tokens", percent(rep.get("unk_token_share"), 4)),
            ("[UNK] share of words", percent(rep.get("unk_word_share"), 4)),
            ("subwords per word", f"{rep.get('subwords_per_word', 0):.3f}"),
            ("words kept whole", percent(rep.get("whole_word_share")))]
    bad = set()
    message = too_small_message(rep.get("sentences") or 0)
    if message:
        sec.warn(message)
        bad.add(3)
    if (rep.get("unk_word_share") or 0) > UNK_WORD_LIMIT:
        sec.warn(f"{percent(rep['unk_word_share'], 3)} of the held-out words contain [UNK] "
                 f"(more than {percent(UNK_WORD_LIMIT, 1)}): characters are missing from vocab.txt")
        bad.add(5)
    sec.add(table(rows, bad_rows=bad))
    if rep.get("unk_examples"):
        sec.add(f'<p>Words that became [UNK]: <span lang="{esc(lang)}">'
                f"{esc(' '.join(rep['unk_examples']))}</span></p>")


def vocab_section(data: ReportInputs, lang: str) -> Section:
    sec = Section("vocab", "Vocabulary")
    folder = data.folder("vocab")
    if data.manifest("vocab") is None:
        sec.note("No finished vocab yet: run `pipeline vocab`.")
        return sec
    try:
        spec = load_tokenizer(folder)
    except VocabError as exc:
        sec.warn(str(exc))
        return sec
    rep_file = folder / REPORT
    if rep_file.is_file():
        _quality_table(sec, json.loads(rep_file.read_text(encoding="utf-8")), lang)

    sentences = _sentences(data)
    if sentences:
        # words as the vocab report counts them: MeCab's, a segmenter's, or BERT's
        segmenter = (data.manifest("vocab") or {}).get("options", {}).get("word_segmenter")
        try:
            groups = [g for _, g in spec.word_pieces(sentences, segmenter)]
        except SegmenterError as exc:
            sec.warn(str(exc))
            return sec
        per_word = Counter(len(w[1]) for g in groups for w in g)
        sentence_pieces = [[spec.tokens[i] for w in g for i in w[1]] for g in groups]
        values = sorted(per_word)
        sec.add(histogram(values, weights=[per_word[v] for v in values],
                          bins=[v - 0.5 for v in range(1, min(max(values), 12) + 2)],
                          title=f"Pieces per word on {len(sentences):,} held-out sentences",
                          xlabel="pieces of one word", ylabel="words"))
        sec.add("<h3>Held-out sentences as the model sees them</h3>",
                '<ul class="sample">' + "".join(_pieces_html(p, lang)
                                                for p in sentence_pieces[:SHOWN_SENTENCES]) + "</ul>")
    pieces = [t for t in spec.tokens if t and not spec.is_special(t)]
    longest = sorted(pieces, key=lambda t: (-len(t.removeprefix("##")), t))[:30]
    sec.add("<h3>Longest pieces</h3>",
            f'<p class="sample" lang="{esc(lang)}">' + " · ".join(esc(t) for t in longest) + "</p>")

    by_script: dict[str, list[str]] = defaultdict(list)
    for t in spec.characters():   # where pieces are text (a byte-level piece is no character)
        by_script[script_of(t) if t.isalpha() else "not a letter"].append(t)
    scripts = sorted(by_script, key=lambda s: -len(by_script[s]))
    if scripts:
        sec.add(bar_chart(scripts, [len(by_script[s]) for s in scripts],
                          title="Characters of vocab.txt by script (each also as ##c)",
                          xlabel="characters"))
        rows = [("script", "characters", "")] + [
            (s, len(by_script[s]), "".join(sorted(by_script[s]))[:400]) for s in scripts]
        sec.add(table(rows, numeric={1}, lang=lang))
    missing = missing_scripts([t for t in pieces if len(t) == 1 and t.isalpha()], script_of)
    if missing:   # the page's text is the browser's to draw; say where this machine cannot
        sec.note(f"No font on the machine that wrote this page draws {', '.join(missing)}: a browser "
                 "there shows that text as empty boxes (install e.g. Debian's fonts-noto-core, or "
                 "open the page elsewhere). The figures do not depend on it: they number such "
                 "labels and write them as text beside the picture.")
    sec.note(f"Held-out figures need at least {MIN_EVAL_SENTENCES:,} sentences to mean much.")
    return sec
