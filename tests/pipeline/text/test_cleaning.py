"""Cleanup of one paragraph of wikiextractor output: markup leftovers, empty brackets, NFC."""
from __future__ import annotations

import pytest

from pipeline.text.cleaning import clean_paragraph, format_article


def test_format_article_drops_headings_and_empty_paragraphs():
    assert format_article(["Lead.", "## History", "{| class=wikitable", "More text."]) == [
        "Lead.", "More text."]


@pytest.mark.parametrize("raw,expected", [
    ("Mesbauer (; 31 січня 1929, Мюнхен — 14 вересня 2011) — фізик.", "Mesbauer (31 січня 1929, Мюнхен — 14 вересня 2011) — фізик."),
    ("Високович (, Гайсин, Україна —) — патологоанатом.", "Високович (Гайсин, Україна) — патологоанатом."),
    ("Мільярд (,) — число, назва величини formula_1.", "Мільярд — число, назва величини."),
    ("A [[Fájl:x.jpg|bélyegkép|kép]] [[Budapest]] fővárosa.", "A kép Budapest fővárosa."),
    ("Lásd: [https://example.hu a honlapot] &amp;nbsp;itt.", "Lásd: a honlapot itt."),
    ("<span style=\"x\">Szöveg</span> <br/>vége &lt; 5.", "Szöveg vége < 5."),
    ("| 1990 || 3946", None),
    ("! Év !! Érték", None),
    ("12, 13.", None),
    ("Nevezetességek:", None),
    ("Tiếng Việt là ngôn ngữ. Ví dụ:", "Tiếng Việt là ngôn ngữ. Ví dụ:"),
    ("Ра\u0301діус ( — «промінь») — відрізок (-5 °C).", "Радіус («промінь») — відрізок (-5 °C)."),
    ("Cafe\u0301 e\u0301s ár", "Café és ár"),
])
def test_clean_paragraph(raw, expected):
    assert clean_paragraph(raw) == expected
