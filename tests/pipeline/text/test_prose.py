"""Which paragraphs are prose: lists, navigation boxes, data, galleries, references are not."""
from __future__ import annotations

import pytest

from pipeline.text.prose import non_prose_reason


@pytest.mark.parametrize("text,reason", [
    ("** 御徒町駅 - 上野駅 - 秋葉原駅", "list"),
    ("• Lê Văn Hiến (1959 - 1962)", "list"),
    ("- Châu Bảo Thắng có 10 xã.", "list"),
    ("— ранній період", "list"),
    ("Ιανουάριος · Φεβρουάριος · Μάρτιος · Απρίλιος · Μάιος", "navbox"),
    ("Quảng Trị | Thừa Thiên | Quảng Nam | Quảng Tín | Quảng Ngãi", "navbox"),
    ("Реформація • Ганза • Нідерландська революція • Річ Посполита", "navbox"),
    ('"version": 2,', "data"),
    ('{"width": 330, "height": 200}', "data"),
    ("[1990, 2000, 3000]", "data"),
    ("Map of Nippur.jpg|Clay tablet with a plan", "gallery"),
    ("rect 0 0 100 100 [[Foo]]", "gallery"),
    ("Retrieved from https://example.org/page on 17 November 2016.", "reference"),
    ("Smith, J. (2001). A Book. Oxford. ISBN 978-3-16-148410-0", "reference"),
])
def test_non_prose_shapes(text, reason):
    assert non_prose_reason(text) == reason


@pytest.mark.parametrize("text", [
    "Η Αθήνα είναι η πρωτεύουσα· έχει μακρά ιστορία. Είναι μεγάλη πόλη.",   # ano teleia after NFC
    "La col·lecció d'art de l'Ajuntament és molt gran i està ben conservada.",  # Catalan l·l
    "— Чому ж це ви, Ларисо Петрівно, вживаєте мужицьку мову?",          # dialogue
    "東京は日本の首都である。人口は約1400万人である。",
    "Ця стаття (див. також: Київ | Львів) описує міста України, їх історію і культуру.",
    "Він написав книгу про Linux, яку видали у 2001 році.",
    '"Hello," he said, and walked away from the house.',
])
def test_prose_stays(text):
    assert non_prose_reason(text) is None


def test_a_long_article_with_a_big_list_keeps_its_prose():
    from pipeline.text.cleaning import format_article

    paragraphs = ["Прозовий абзац про місто. Він має кілька речень."] + [f"* пункт {i}" for i in range(200)]
    assert format_article(paragraphs) == ["Прозовий абзац про місто. Він має кілька речень."]


def test_three_item_navbox_needs_a_strong_separator():
    assert non_prose_reason("Промислова революція • Російська імперія • Наполеонівські війни") == "navbox"
    assert non_prose_reason("Він – видатний поет – народився у Києві") is None


def test_numbered_items_and_picture_options_are_not_prose():
    assert non_prose_reason("1) відрізок, що з'єднує центр кола з точкою кола.") == "list"
    assert non_prose_reason("thumb|250px|Lăng Khải Định ở xã Thủy Bằng") == "gallery"
    assert non_prose_reason("1990 року місто (тоді село) мало 500 жителів.") is None
