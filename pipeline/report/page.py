"""The report's HTML: sections with stable ids, tables, warnings, text in the language's script.

Everything a section shows is escaped here; text of the corpus goes into elements with the
language's `lang` attribute, so that the browser picks a font that has its script (plots
never draw corpus text: matplotlib has no glyphs for most scripts).

Usage:
    sec = Section("funnel", "What each stage kept")
    sec.warn("filter rejected 72% of the documents")        # red, also listed at the top
    sec.add(table([("stage", "documents"), ("filter", "1,234")]))
    html = render_page("wiki2bert report: uk", "data/uk", [sec], lang="uk")
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

SECTION_IDS = ("funnel", "rejections", "quality", "vocab", "hdf5", "training", "downstream")

STYLE = """
body { font-family: "Noto Sans", "DejaVu Sans", sans-serif; margin: 0 auto; max-width: 1100px;
       padding: 0 1.5em 3em; color: #222; line-height: 1.4; }
h1 { margin-bottom: .2em; } h2 { border-bottom: 2px solid #ddd; padding-top: 1em; }
nav a { margin-right: 1em; } .meta { color: #666; }
table { border-collapse: collapse; margin: .6em 0; font-size: 14px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.warn { color: #b00000; font-weight: bold; } .ok { color: #176917; }
tr.bad td { background: #fde8e8; }
ul.warnings { background: #fde8e8; border: 1px solid #e3a0a0; padding: .6em 2em; }
img { max-width: 100%; display: block; margin: .6em 0; }
.sample { font-size: 14px; background: #f6f6f6; padding: .4em .8em; overflow-wrap: anywhere; }
td:last-child { overflow-wrap: anywhere; }
.sample li { margin: .2em 0; } .piece { border-right: 1px solid #999; padding: 0 2px; }
.note { color: #555; font-size: 14px; }
summary { cursor: pointer; color: #555; font-size: 14px; }
"""


def esc(text) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class Section:
    """One part of the page: an id other tools link to, a title, its warnings and content."""

    id: str
    title: str
    parts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, *fragments: str) -> None:
        self.parts.extend(fragments)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def note(self, message: str) -> None:
        self.parts.append(f'<p class="note">{esc(message)}</p>')

    def html(self) -> str:
        warnings = "".join(f'<p class="warn">⚠ {esc(w)}</p>' for w in self.warnings)
        return (f'<section id="{esc(self.id)}">\n<h2>{esc(self.title)}</h2>\n{warnings}\n'
                + "\n".join(self.parts) + "\n</section>")


def num(value, digits: int = 0) -> str:
    """12,345 / 0.123 / '-' for None, for table cells."""
    if value is None:
        return "-"
    if isinstance(value, float) and digits:
        return f"{value:,.{digits}f}"
    if isinstance(value, (int, float)):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3g}"
    return str(value)


def percent(share: float | None, digits: int = 1) -> str:
    return "-" if share is None else f"{100 * share:.{digits}f}%"


def table(rows, numeric: set[int] | None = None, bad_rows: set[int] | None = None,
          lang: str | None = None) -> str:
    """rows[0] is the header; cells are escaped; `numeric` column indices are right-aligned;
    `bad_rows` (indices into rows[1:]) are shaded red; `lang` marks cells of corpus text."""
    numeric = numeric or set()
    bad_rows = bad_rows or set()
    head = "".join(f'<th{" class=num" if i in numeric else ""}>{esc(c)}</th>'
                   for i, c in enumerate(rows[0]))
    text = f' lang="{esc(lang)}"' if lang else ""
    body = []
    for r, row in enumerate(rows[1:]):
        cells = "".join(f'<td{" class=num" if i in numeric else text}>{esc(c)}</td>'
                        for i, c in enumerate(row))
        body.append(f'<tr{" class=bad" if r in bad_rows else ""}>{cells}</tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def text_list(lines, lang: str, css: str = "sample") -> str:
    """Lines of corpus text (escaped) in a list whose `lang` lets the browser pick the font."""
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return f'<ul class="{css}" lang="{esc(lang)}">{items}</ul>'


def render_page(title: str, subtitle: str, sections: list[Section], lang: str) -> str:
    """The whole page: title, links to the sections, every warning at the top, the sections."""
    nav = " ".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in sections)
    warnings = [(s, w) for s in sections for w in s.warnings]
    if warnings:
        items = "".join(f'<li class="warn"><a href="#{esc(s.id)}">{esc(s.title)}</a>: {esc(w)}</li>'
                        for s, w in warnings)
        summary = f'<h3>What needs a look</h3><ul class="warnings" id="warnings">{items}</ul>'
    else:
        summary = '<p class="ok" id="warnings">No stage lost an unusual share of its input.</p>'
    body = "\n".join(s.html() for s in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            f'<h1>{esc(title)}</h1><p class="meta">{esc(subtitle)}</p>\n<nav>{nav}</nav>\n'
            f"{summary}\n{body}\n</body></html>\n")
