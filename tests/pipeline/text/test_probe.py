"""The probe's tagging (pipeline/text/probe.py): links found again in the cleaned text, IOB2
tags per whitespace token, propagation of linked forms and of the title, the sentence rules."""
from __future__ import annotations

import pytest

from pipeline.text.probe import (
    MAX_TOKENS,
    Forms,
    conll_block,
    locate_links,
    prepare_article,
    tag_article,
    tag_tokens,
    title_form,
    token_key,
)
from pipeline.text.splitting import split_lines


def make_record(title: str, text: str, labels: list[tuple[str, str]]) -> dict:
    """A record whose links are the first occurrences (in order) of each label."""
    links, pos = [], 0
    for label, target in labels:
        s = text.index(label, pos)
        links.append([s, s + len(label), target])
        pos = s + len(label)
    return {"id": "1", "title": title, "text": text, "links": links}


def tagged(record: dict, lang: str = "hu") -> tuple[list, dict]:
    article = prepare_article(record)
    per = split_lines("\n".join(article.paragraphs), lang, "rules")
    sentences, dropped = tag_article(article, per)
    return [[(t, g) for t, g in zip(s.tokens, s.tags)] for s in sentences], dropped


def iob2_valid(tags: list[str]) -> bool:
    return all(b != "I-LINK" or a != "O" for a, b in zip(["O"] + tags, tags))


def test_links_are_found_again_after_the_format_stages_cleaning():
    rec = make_record("Szeged",
                      "Szeged a [1] Tisza &amp; Maros partján fekszik.\n## Története.\n"
                      "A [[várost]] a tatárok pusztították.",
                      [("Tisza &amp; Maros", "Tisza"), ("tatárok", "Tatárjárás")])
    article = prepare_article(rec)
    assert article.paragraphs == ["Szeged a Tisza & Maros partján fekszik.", "A várost a tatárok pusztították."]
    assert [[p[s:e] for s, e in spans] for p, spans in zip(article.paragraphs, article.spans)] == [
        ["Tisza & Maros"], ["tatárok"]]
    assert article.lost_links == 0


def test_the_nearest_occurrence_of_a_label_is_taken():
    raw = "Pécs és Pécs és még egyszer Pécs."
    assert locate_links(raw, raw, [(8, 12)]) == [(8, 12)]
    assert locate_links(raw, raw.replace("és", "s"), [(28, 32)]) == [(26, 30)]


def test_tokens_overlapping_a_label_are_one_mention():
    tokens, tags, n = tag_tokens("Élt Budapesten és a Magyar Tudományos Akadémián dolgozott.",
                                 [(4, 12), (20, 47)])
    assert list(zip(tokens, tags)) == [
        ("Élt", "O"), ("Budapesten", "B-LINK"), ("és", "O"), ("a", "O"), ("Magyar", "B-LINK"),
        ("Tudományos", "I-LINK"), ("Akadémián", "I-LINK"), ("dolgozott.", "O")]
    assert n == 2
    # two labels next to each other: two mentions
    assert tag_tokens("Petőfi Sándor Arany János", [(0, 13), (14, 25)])[1] == [
        "B-LINK", "I-LINK", "B-LINK", "I-LINK"]


def test_later_unlinked_mentions_and_the_title_are_propagated():
    text = ("Az Eötvös Loránd Tudományegyetem Budapesten van. Alapította Pázmány Péter.\n"
            "Az egyetemet Pázmány Péter 1635-ben alapította. Ma is az Eötvös Loránd Tudományegyetem a legnagyobb.\n"
            "Eötvös Loránd neve díszíti, 1950 óta.")
    rec = make_record("Eötvös Loránd Tudományegyetem (Budapest)", text,
                      [("Budapesten", "Budapest"), ("Pázmány Péter", "Pázmány Péter"), ("1950", "1950")])
    sentences, dropped = tagged(rec)
    marked = [" ".join(f"[{t}]" if g != "O" else t for t, g in s) for s in sentences]
    assert marked == [
        # the title (its "(...)" left out) is a mention where it is written
        "Az [Eötvös] [Loránd] [Tudományegyetem] [Budapesten] van.",
        "Alapította [Pázmány] [Péter.]",
        "Az egyetemet [Pázmány] [Péter] 1635-ben alapította.",   # propagated, whole tokens
        "Ma is az [Eötvös] [Loránd] [Tudományegyetem] a legnagyobb.",
        # a number is never propagated; "Eötvös Loránd" alone is no linked form
        "Eötvös Loránd neve díszíti, [1950] óta.",
    ]
    assert all(iob2_valid([g for _, g in s]) for s in sentences)
    assert [g for _, g in sentences[0]][1:4] == ["B-LINK", "I-LINK", "I-LINK"]
    assert dropped == {}


def test_sentences_the_probe_cannot_use_are_dropped_with_a_reason():
    long = " ".join(["szó"] * (MAX_TOKENS + 1))
    text = (f"A [[Duna]] nagy folyó. Ebben nincs semmi. Duna {long}.\n"
            "A dunai hajók a Dunaiak, a Duna mellett. Ikon \ue001 a Duna mellett.")
    rec = make_record("Folyó", text.replace("[[Duna]]", "Duna"), [("Duna", "Duna")])
    sentences, dropped = tagged(rec)
    assert [" ".join(t for t, _ in s) for s in sentences] == ["A Duna nagy folyó."]
    # "Dunaiak": a form of a linked word, glued to it, left untagged: the sentence would teach noise
    assert dropped == {"no_mention": 1, "too_long": 1, "unlinked_variant": 1, "private_use": 1}


def test_token_keys_and_title_forms_in_several_scripts():
    assert token_key("«Київ»,") == "Київ" and token_key("(Budapest).") == "Budapest"
    assert token_key("—") == "" and token_key("C++") == "C"
    assert title_form("Merkúr (bolygó)") == ["Merkúr"] and title_form("Київ") == ["Київ"]
    forms = Forms()
    forms.add(["Нью-Йорк"])
    forms.add(["Нью-Йорк", "Таймс"])
    keys, tags = ["У", "Нью-Йорк", "Таймс", "і", "Нью-Йорк"], ["O"] * 5
    assert forms.propagate(keys, tags) == 2
    assert tags == ["O", "B-LINK", "I-LINK", "O", "B-LINK"]   # the longest form first


@pytest.mark.parametrize("lang,title,text,labels,expected", [
    ("uk", "Київ", "Київ — столиця України. Місто стоїть на Дніпрі.",
     [("України", "Україна"), ("Дніпрі", "Дніпро")],
     [[("Київ", "B-LINK"), ("—", "O"), ("столиця", "O"), ("України.", "B-LINK")],
      [("Місто", "O"), ("стоїть", "O"), ("на", "O"), ("Дніпрі.", "B-LINK")]]),
    ("vi", "Hà Nội", "Hà Nội là thủ đô của Việt Nam.", [("Việt Nam", "Việt Nam")],
     [[("Hà", "B-LINK"), ("Nội", "I-LINK"), ("là", "O"), ("thủ", "O"), ("đô", "O"), ("của", "O"),
       ("Việt", "B-LINK"), ("Nam.", "I-LINK")]]),
    # a script without spaces: a token is whatever the whitespace split gives
    ("ja", "東京", "東京は日本の首都である。人口は多い。", [("日本", "日本")],
     [[("東京は日本の首都である。", "B-LINK")]]),
])
def test_other_scripts(lang, title, text, labels, expected):
    sentences, _dropped = tagged(make_record(title, text, labels), lang)
    assert sentences == expected


def test_conll_block():
    assert conll_block(["A", "Duna", "folyó."], ["O", "B-LINK", "O"]) == "A\tO\nDuna\tB-LINK\nfolyó.\tO\n\n"
