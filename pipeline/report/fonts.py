"""Text the report's pictures can draw on this machine, and what to do with the rest.

matplotlib draws a label with the fonts it finds here; a character none of them has becomes an
empty box (Devanagari, Thai, CJK... on a server without Noto fonts). The figures therefore put
such labels beside the picture as HTML text (the browser may have the font even where this
machine has not) and a number in the picture; the page says when this machine has no font for
a script of the corpus.

Usage:
    drawable("Hindi: हिन्दी")              # False here without a Devanagari font
    shown, legend = plot_labels(["kept", "हिन्दी"])   # (["kept", "[1]"], '<ol ...>हिन्दी</ol>')
"""
from __future__ import annotations

import functools
import html

# matplotlib's last-resort font "has" every character, as a box with the code point in it
LAST_RESORT = "LastResort"


@functools.lru_cache(maxsize=1)
def font_characters() -> frozenset[int]:
    """Code points with a real glyph in a font matplotlib can use here (its own and the system's)."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    chars: set[int] = set()
    for entry in font_manager.fontManager.ttflist:
        if LAST_RESORT in entry.fname:
            continue
        try:
            chars.update(k for k, glyph in FT2Font(entry.fname).get_charmap().items() if glyph)
        except (OSError, RuntimeError, ValueError):   # an unreadable font file: skip it
            continue
    return frozenset(chars)


def drawable(text: str) -> bool:
    chars = font_characters()
    return all(c.isspace() or ord(c) in chars for c in str(text))


def plot_labels(labels) -> tuple[list[str], str]:
    """(labels to draw, HTML legend): a label this machine cannot draw becomes "[n]" in the
    picture and item n of the legend, as text; no legend when every label can be drawn."""
    shown, legend = [], []
    for label in labels:
        if drawable(label):
            shown.append(str(label))
        else:
            legend.append(str(label))
            shown.append(f"[{len(legend)}]")
    if not legend:
        return shown, ""
    items = "".join(f"<li>{html.escape(t)}</li>" for t in legend)
    return shown, (f'<ol class="legend note">{items}</ol><p class="note">Numbered labels: this '
                   "machine has no font for their script, so they are written here, not drawn.</p>")


def missing_scripts(characters, script_of) -> list[str]:
    """The scripts among `characters` (one per character) that no font here can draw."""
    return sorted({script_of(c) for c in characters if not c.isspace() and not drawable(c)})
