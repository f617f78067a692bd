"""Section `rejections`: why the filter dropped documents, as a bar chart, with the first lines
of a few rejected documents per reason and the thresholds that were in force.

Reads filtered/rejections.json (counts per reason, examples, settings).
"""
from __future__ import annotations

import json

from pipeline.core.manifest import MANIFEST

from .figures import bar_chart
from .inputs import ReportInputs
from .page import Section, esc, num, percent, table, text_list

REJECTIONS = "rejections.json"   # written by the filter stage beside its output
REASON_LIMIT = 0.10              # one rule rejecting more than this share of documents is unusual
ALPHABET_SHOWN = 200             # characters of a learned alphabet shown before the rest is folded


def rejections_section(data: ReportInputs, lang: str) -> Section:
    sec = Section("rejections", "Rejections: why the filter dropped documents")
    folder = data.folder("filter")
    path = folder / REJECTIONS
    if data.manifest("filter") is None or not path.is_file():
        sec.note(f"No finished filter output ({folder / MANIFEST} or {REJECTIONS} missing): run "
                 "`pipeline filter`.")
        return sec
    rej = json.loads(path.read_text(encoding="utf-8"))
    total, rejected = rej.get("documents", 0), rej.get("rejected", 0)
    reasons = sorted((rej.get("reasons") or {}).items(), key=lambda kv: -kv[1])
    sec.add(f"<p>{num(rejected)} of {num(total)} documents rejected "
            f"({esc(percent(rejected / total if total else None))}).</p>")
    shares = [n / total for _, n in reasons]
    sec.add(bar_chart(["kept"] + [r for r, _ in reasons], [rej.get("kept", 0)] + [n for _, n in reasons],
                      title="Documents kept, and rejected per reason (the first rule that failed)",
                      xlabel="documents", bad=[False] + [s > REASON_LIMIT for s in shares]))
    for (reason, _n), share in zip(reasons, shares):
        if share > REASON_LIMIT:
            sec.warn(f"the rule '{reason}' rejected {percent(share)} of all documents: "
                     "check its threshold against the examples below")
    if not reasons:
        sec.note("No document was rejected.")
    examples = rej.get("examples") or {}
    for reason, n in reasons:
        lines = examples.get(reason)
        sec.add(f"<h3>{esc(reason)} <small>({num(n)} documents)</small></h3>")
        if lines:
            sec.add(text_list(lines, lang))
        else:
            sec.note("No examples recorded (filter output written before the report existed): "
                     "`pipeline filter --invert` writes the rejected documents to rejected/.")
    settings = rej.get("settings") or {}
    rows = [("threshold", "value")] + [(k, v) for k, v in sorted(settings.items()) if k != "alphabet"]
    if len(rows) > 1:
        sec.add("<h3>Thresholds</h3>", table(rows, numeric={1}))
    if rej.get("alphabet"):
        sec.add(alphabet_html(rej["alphabet"], rej.get("alphabet_source", ""), lang))
    return sec


def alphabet_html(alphabet: str, source: str, lang: str, shown: int = ALPHABET_SHOWN) -> str:
    """The alphabet in a paragraph; a long one (Japanese: thousands of characters) shows its
    first `shown` characters, says how many more there are, and folds the whole of it into a
    collapsed <details>."""
    text = f' lang="{esc(lang)}"'
    head = f"<p>Alphabet ({esc(source)}): "
    if len(alphabet) <= shown:
        return f"{head}<span{text}>{esc(alphabet)}</span></p>"
    more = len(alphabet) - shown
    return (f"{head}<span{text}>{esc(alphabet[:shown])}</span> … and {more:,} more "
            f"({len(alphabet):,} in all)</p>\n<details><summary>The whole alphabet "
            f"({len(alphabet):,} characters)</summary><p class=\"sample\"{text}>{esc(alphabet)}</p>"
            "</details>")
