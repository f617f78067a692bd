"""The report reads on a machine without fonts for the corpus's script (issue 38: Indic text
was empty boxes in the pictures): labels no font here can draw are numbered in the picture and
written beside it as HTML text, and the page says which scripts this machine cannot draw."""
from __future__ import annotations

import pytest

from pipeline.report import fonts
from pipeline.report.figures import bar_chart, panels

HINDI = "हिन्दी स्रोत"


@pytest.fixture
def no_devanagari(monkeypatch):
    """This machine as a server without Noto fonts: no font has Devanagari (U+0900-U+097F)."""
    chars = frozenset(c for c in fonts.font_characters() if not 0x900 <= c <= 0x97F)
    monkeypatch.setattr(fonts, "font_characters", lambda: chars)


def test_labels_no_font_here_can_draw_go_beside_the_picture_as_text(no_devanagari, monkeypatch):
    drawn = []
    import matplotlib.axes

    real = matplotlib.axes.Axes.set_yticks
    monkeypatch.setattr(matplotlib.axes.Axes, "set_yticks",
                        lambda self, ticks, labels=None, **kw: (drawn.extend(labels or []),
                                                                real(self, ticks, labels, **kw))[1])
    page = bar_chart(["kept", HINDI, "too short"], [10, 3, 2], title="sources")
    assert drawn == ["kept", "[1]", "too short"]      # no Devanagari reaches the picture
    assert page.startswith("<img") and f"<li>{HINDI}</li>" in page and "Numbered labels" in page
    drawn.clear()
    page = panels([("documents", ["wikipedia", HINDI], [5, 3], [False, False]),
                   ("bytes", ["wikipedia", HINDI], [50, 30], [False, False])], title="funnel")
    assert "[1]" in drawn and HINDI not in drawn and f"<li>{HINDI}</li>" in page


def test_labels_every_font_draws_stay_in_the_picture():
    assert fonts.drawable("Árvíztűrő tükörfúrógép, Київ, Hà Nội")
    shown, legend = fonts.plot_labels(["kept", "too short"])
    assert shown == ["kept", "too short"] and legend == ""


def test_the_last_resort_font_does_not_count_as_a_glyph():
    # matplotlib ships LastResort, which has every code point (as a box): it must not count
    assert 0x10FFFD not in fonts.font_characters()


def test_the_missing_scripts_are_named(no_devanagari):
    from pipeline.text.doc_rules import script_of

    assert fonts.missing_scripts(list("हिन्दीab"), script_of) == ["DEVANAGARI"]
