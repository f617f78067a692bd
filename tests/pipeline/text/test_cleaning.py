"""Cleanup of one paragraph of wikiextractor output: markup leftovers, empty brackets, NFC."""
from __future__ import annotations

import pytest

from pipeline.text.cleaning import clean_paragraph, format_article


def test_format_article_drops_headings_and_empty_paragraphs():
    assert format_article(["Lead.", "## History", "{| class=wikitable", "More text."]) == [
        "Lead.", "More text."]


@pytest.mark.parametrize("raw,expected", [
    ("Mesbauer (; 31 січня 1929, Мюнхен — 14 вересня 2011) — фізик.",
     "Mesbauer (31 січня 1929, Мюнхен — 14 вересня 2011) — фізик."),
    ("Високович (, Гайсин, Україна —) — патологоанатом.", "Високович (Гайсин, Україна) — патологоанатом."),
    ("Мільярд (,) — число, назва величини formula_1.", "Мільярд — число, назва величини."),
    ("A [[Fájl:x.jpg|bélyegkép|kép]] [[Budapest]] fővárosa.", "A kép Budapest fővárosa."),
    ("Lásd: [https://example.hu a honlapot] &amp;nbsp;itt.", "Lásd: a honlapot itt."),
    ("<span style=\"x\">Szöveg</span> <br/>vége &lt; 5.", "Szöveg vége < 5."),
    ("| 1990 || 3946", None),
    ("! Év !! Érték", None),
    ("12, 13.", None),
    ("Nevezetességek:", None),
    ("Tiếng Việt là ngôn ngữ. Ví dụ:", "Tiếng Việt là ngôn ngữ."),
    ("Ра\u0301діус ( — «промінь») — відрізок (-5 °C).", "Радіус («промінь») — відрізок (-5 °C)."),
    ("Cafe\u0301 e\u0301s ár", "Café és ár"),
])
def test_clean_paragraph(raw, expected):
    assert clean_paragraph(raw) == expected


@pytest.mark.parametrize("raw,expected", [
    # holes where a template stood, in every script
    ("小説「」の中で、彼は連邦会議（）で演説した。", "小説の中で、彼は連邦会議で演説した。"),
    ("『 』と【】と〔 〕。", "とと。"),
    ("Він сказав « » і „ “ та “ ” й [ ].", "Він сказав і та й."),
    ("Тарас (, народився 1814) поет.", "Тарас (народився 1814) поет."),
    ("東京（、とうきょう）は首都。", "東京（とうきょう）は首都。"),
    ("Paris (capitale ; ) est belle.", "Paris (capitale) est belle."),
    # footnote marks
    ("Hà Nội là thủ đô.[125] Dân số đông.[a][12]", "Hà Nội là thủ đô. Dân số đông."),
    ("Ο όρος υ [y] παραμένει.", "Ο όρος υ [y] παραμένει."),
])
def test_holes_and_footnote_marks_go_without_a_trace(raw, expected):
    assert clean_paragraph(raw) == expected


@pytest.mark.parametrize("raw,expected", [
    # a lead-in sentence goes, the sentences before it stay, whatever the script's stops
    ("এটি প্রথম বাক্য। এটি দ্বিতীয় বাক্য। তালিকাটি নিচে দেওয়া হলো:", "এটি প্রথম বাক্য। এটি দ্বিতীয় বাক্য।"),
    ("第一文です。第二文です。次の通りである：", "第一文です。第二文です。"),
    ("Πρώτη πρόταση. Δεύτερη; Τα μέλη είναι:", "Πρώτη πρόταση. Δεύτερη;"),
    ("यह पहला वाक्य है। सूची इस प्रकार है:", "यह पहला वाक्य है।"),
    ("Nevezetességek:", None),
])
def test_list_lead_in_sentence_goes_per_script(raw, expected):
    assert clean_paragraph(raw) == expected


def test_format_article_counts_why_paragraphs_went():
    from collections import Counter

    dropped = Counter()
    kept = format_article(["Prose sentence here.", "* item", "Ιανουάριος · Φεβρουάριος · Μάρτιος · Απρίλιος",
                           '{"version": 2, "width": 330}', "Smith, J. (2001). ISBN 978-3-16-148410-0.",
                           "Lead-in only:"], dropped)
    assert kept == ["Prose sentence here."]
    assert dropped == {"list": 1, "navbox": 1, "data": 1, "reference": 1, "list_lead_in": 1}


@pytest.mark.parametrize("quote", ['"Chúng tôi sẽ thắng." Ông nói thêm.', "«Ми переможемо», — сказав він.",
                                   "「必ず勝つ。」と述べた。", "„Wir siegen“, sagte er."])
def test_a_lead_in_before_a_quotation_stays(quote):
    """"X said:" introduces the quotation that follows; only a lead-in with nothing after it goes."""
    lead = "Trước đó có một câu. Tổng thống đã phát biểu về bài học:"
    assert format_article([lead, quote]) == [lead, quote]
    assert format_article([lead, "## Heading", quote]) == ["Trước đó có một câu.", quote]
    assert format_article([lead, "Một đoạn văn khác bắt đầu ở đây."]) == [
        "Trước đó có một câu.", "Một đoạn văn khác bắt đầu ở đây."]
