"""Wikitext rewritten before wikiextractor: visible text of inline templates and colon links
stays, the rest goes without a hole (forms modelled on real ja/uk/en/vi wikitext)."""
from __future__ import annotations

import pytest

from pipeline.text.wikitext import WikitextRewriter, split_arguments

rewrite = WikitextRewriter(skip_prefixes={"Файл", "Категорія", "ファイル", "Category"})


@pytest.mark.parametrize("wikitext,expected", [
    # interlanguage-link templates: the display text, else the local title
    ("小説「{{仮リンク|ダーク・タワー|en|The Dark Tower}}」の中で", "小説「ダーク・タワー」の中で"),
    ("{{нп|The Sleepwalkers (книга)|Сновиди||The Sleepwalkers}} Кестлера", "Сновиди Кестлера"),
    ("{{нп|Благородний пансіон||ru|Пансион}}", "Благородний пансіон"),
    ("{{ill|Hermann Bahr|de}} wrote", "Hermann Bahr wrote"),
    ("{{ill|Foo|de|Foo (Begriff)|lt=the foo}}", "the foo"),
    ("{{Не перекладено|Назва|текст|en|Name}}", "текст"),
    # language and transliteration templates: the text, codes skipped
    ("({{lang-la|púlmo}}, {{lang-la2|pulmónes}})", "(púlmo, pulmónes)"),
    ("{{lang|de|Donau}} and {{langx|fr|Danube}}", "Donau and Danube"),
    ("{{transl|ru|ALA|Moskva}} {{IPA|/k/}}", "Moskva /k/"),
    ("{{Lang|zh|河內}}”", "河內”"),
    # formatting and nesting
    ("{{nowrap|{{lang|ru|Организация Объединённых Наций}}}}", "Организация Объединённых Наций"),
    ("{{abbr|NASA|National Aeronautics}} и {{ruby|漢字|かんじ}}", "NASA и 漢字"),
    # numbers and units with the value in the wikitext
    ("{{convert|2095|km2|abbr=on}}.", "2095 km²."),
    ("{{convert|1|to|5|km}} away", "1–5 km away"),
    ("{{nts|603700}}{{nbsp}}км²", "603700 км²"),
    ("{{formatnum:1234567}} осіб", "1234567 осіб"),
    ("{{val|1.5|u=m}}", "1.5 m"),
    # characters
    ("A{{snd}}B{{ndash}}C {{!}} D", "A – B–C | D"),
    # everything else goes
    ("Text{{Cite web|url=http://x|title=T}} more{{sfn|Smith|2001}}.", "Text more."),
    ("{{Infobox country\n|name = X\n|image = [[Файл:x.png|thumb|a [[b|c]]]]\n}}Body", "Body"),
    ("{{#if: x | yes | no}}Body", "Body"),
    # links with a colon keep their label
    ("[[:en:Danube|Donau]] and [[:en:Danube]]", "Donau and Danube"),
    ("[[Star Wars: Episode I|the first film]] and [[wikt:слово|слово]]", "the first film and слово"),
    ("[[:Категорія:Міста|категорію міст]]", "категорію міст"),
    # files and categories stay for wikiextractor; sidebar language links go
    ("[[Категорія:Міста]][[en:Kyiv]]", "[[Категорія:Міста]]"),
    ("[[Файл:a.jpg|thumb|cap [[:en:A|B]]]]", "[[Файл:a.jpg|thumb|cap B]]"),
    # emphasis is not quotation
    ("''Кобзар'' та '''Гайдамаки''' і l''''Odyssée'''", "Кобзар та Гайдамаки і l'Odyssée"),
    # math, code and comments are untouched
    ("<math>\\frac{{a}}{b}</math> {{lang|de|x}}", "<math>\\frac{{a}}{b}</math> x"),
    ("<!-- {{lang|de|x}} -->y", "<!-- {{lang|de|x}} -->y"),
])
def test_rewrite(wikitext, expected):
    assert rewrite(wikitext) == expected


def test_an_unclosed_file_link_ends_at_its_paragraph():
    text = "Before.\n\n[[Файл:a.jpg|thumb|caption [[b|c]]\n\nAfter the picture, the article goes on."
    assert rewrite(text) == "Before.\n\n\n\nAfter the picture, the article goes on."


def test_arguments_split_outside_links():
    assert split_arguments("a|[[b|c]]|d=e") == ["a", "[[b|c]]", "d=e"]


def test_extract_keeps_interlanguage_and_colon_link_text():
    """Through wikiextractor: no hole, the visible words stay."""
    from pipeline.text.articles import article_record

    text = ("'''Тест''' — слово з {{lang-en|test}}. Роман «{{нп|Сновиди||en|The Sleepwalkers}}» "
            "та фільм [[Star Wars: Episode I|Епізод I]] згадано в [[:en:Foo|англійській статті]].")
    record = article_record(1, 1, "Тест", text, "https://uk.wikipedia.org/wiki", "Шаблон:",
                            {"Шаблон", "Файл", "Категорія"}, frozenset({"Файл", "Категорія"}))
    assert record["text"] == ("Тест — слово з test. Роман «Сновиди» та фільм Епізод I згадано в "
                              "англійській статті.")


def test_a_file_link_under_a_namespace_alias_stays_for_wikiextractor():
    """viwiki's "Hình:" is an alias of File that the dump's siteinfo does not list."""
    text = "[[Hình:Lang Khai Dinh.jpg|thumb|250px|Lăng Khải Định]] Văn bản."
    assert rewrite(text) == text
