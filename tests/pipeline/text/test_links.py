"""Article links carried through wikiextractor (pipeline/text/links.py): the record's text stays
byte-identical to wikiextractor's own, and each link's label gets its offsets and target."""
from __future__ import annotations

import pytest

from pipeline.text import links as L
from pipeline.text.articles import CANONICAL_NAMESPACES, article_record, namespace_names, page_namespace
from pipeline.text.dump import DumpReader
from pipeline.text.wikitext import WikitextRewriter

KNOWN = set(CANONICAL_NAMESPACES.values()) | {"Fájl", "Kategória", "Sablon"}
DROP = frozenset({"Fájl", "Kategória"})


def record(wikitext: str, title: str = "Alma") -> dict:
    return article_record("1", "1", title, wikitext, "https://hu.wikipedia.org/wiki", "Sablon:", KNOWN, DROP)


def reference_text(wikitext: str, title: str = "Alma", known=KNOWN, drop=DROP, prefix="Sablon:") -> str:
    """What extract wrote before links were kept: the rewriter, then wikiextractor alone."""
    from wikiextractor.extract import Extractor

    text = WikitextRewriter(drop, prefix)(wikitext)
    ex = Extractor("1", "1", "https://hu.wikipedia.org/wiki", title, [text], templatePrefix=prefix,
                   knownNamespaces=known, keepSections=True)
    paragraphs = ex.clean_text(text, mark_headers=True, expand_templates=False, html_safe=False)
    return "\n".join(p for p in paragraphs if p.strip())


def labelled(wikitext: str, title: str = "Alma") -> list[tuple[str, str]]:
    rec = record(wikitext, title)
    assert rec["text"] == reference_text(wikitext, title)
    assert not L.MARKERS.search(rec["text"])
    return [(rec["text"][s:e], target) for s, e, target in rec["links"]]


@pytest.mark.parametrize("wikitext,expected", [
    ("A [[Tisza]] folyó.", [("Tisza", "Tisza")]),
    ("Ez [[Magyarország|hazánk]] része.", [("hazánk", "Magyarország")]),
    # letters glued after the link belong to its label, as MediaWiki renders it
    ("Élt [[Budapest]]en és [[alma|almá]]kat evett.", [("Budapesten", "Budapest"), ("almákat", "Alma")]),
    # first letter upper-cased, "_" as space, no anchor, spaces collapsed
    ("Lásd [[New_York#Története|a várost]] és [[rózsafélék]].",
     [("a várost", "New York"), ("rózsafélék", "Rózsafélék")]),
    # inline templates are rewritten first, innermost first: the link inside survives
    ("{{nowrap|{{lang|hu|[[Duna]]}}}} folyik.", [("Duna", "Duna")]),
    # a link inside a dropped template, table, reference or image caption is gone with it
    ("{{Infobox|x=[[Foo]]}}Szöveg [[Bar]] itt.", [("Bar", "Bar")]),
    ("{| class=wikitable\n| [[Foo]]\n|}\nSzöveg [[Bar]] itt.", [("Bar", "Bar")]),
    ("Szöveg<ref>[[Foo]] 2001</ref> [[Bar]] itt.", [("Bar", "Bar")]),
    ("[[Fájl:x.jpg|bélyegkép|A [[Duna]] képe]] Szöveg [[Bar]].", [("Bar", "Bar")]),
    # not article links: categories, other wikis, a section of the same page, <nowiki>
    ("Szöveg [[Kategória:X]] [[:en:Foo|Bar]] [[#Története|lásd]] <nowiki>[[Foo]]</nowiki>.", []),
    # an indented line loses its ":" in the text; the offsets follow
    ("Bevezetés.\n:Egy [[Idézet]] sor.", [("Idézet", "Idézet")]),
    # a link in a heading is not in a paragraph
    ("Bevezetés [[Foo]].\n\n== [[Bar]] ==\nSzöveg.", [("Foo", "Foo")]),
])
def test_links_and_their_labels(wikitext, expected):
    assert labelled(wikitext) == expected


@pytest.mark.parametrize("wikitext,expected", [
    # a marker between a space and "." hides wikiextractor's " ." -> "." rule: the page is
    # cleaned once more without markers and the link is mapped onto that text
    ("Ez a platformot [[.NET]] néven ismerik.", [(".NET", ".NET")]),
    ("Egy [[ Foo ]] szó.", [("Foo", "Foo")]),   # a label with spaces around it
    ("Alma [[Foo|]] , körte [[Bar]].", [("Bar", "Bar")]),   # an empty label
])
def test_a_marker_where_wikiextractors_cleanup_looks_keeps_the_text(wikitext, expected):
    assert labelled(wikitext) == expected


def test_every_text_of_the_sample_dump_is_what_wikiextractor_writes(sample_dump):
    reader = DumpReader(sample_dump)
    n = links = 0
    for page in reader.pages():
        if page_namespace(page, reader.siteinfo) != "0" or page.redirect:
            continue
        known, prefix = namespace_names(reader.siteinfo), reader.siteinfo.namespaces[10] + ":"
        drop = frozenset(reader.siteinfo.namespaces[k] for k in (-2, 6, 14))
        rec = article_record(page.id, page.revid, page.title, page.text, "u", prefix, known, drop)
        if rec is None:
            continue
        assert rec["text"] == reference_text(page.text, page.title, known, drop, prefix), page.title
        for s, e, target in rec["links"]:
            assert 0 <= s < e <= len(rec["text"]) and target[:1].isupper() or not target[:1].isalpha()
        n, links = n + 1, links + len(rec["links"])
    assert n == 41 and links > 200


def test_unbalanced_markers_drop_their_link_and_never_stay_in_the_text():
    o, c = chr(L.OPEN), chr(L.CLOSE)
    text = f"a {o}Foo{c} b {chr(L.OPEN + 1)}Bar c {chr(L.CLOSE + 2)}Baz{chr(L.CLOSE + 3)} d"
    plain, spans, _odd = L.strip_markers(text)
    assert plain == "a Foo b Bar c Baz d" and spans == [(2, 5, 0)]
    # the pair of a link in a dropped table is gone, the next link is still link 1
    plain, spans, _odd = L.strip_markers(f"x {chr(L.OPEN + 1)}Bar{chr(L.CLOSE + 1)}.")
    assert plain == "x Bar." and spans == [(2, 5, 1)]


def test_pages_with_private_use_characters_or_too_many_links():
    text = "Ikon \ue123 és [[Foo]]."
    assert L.mark_links(text) == (text, [])
    assert record(text)["links"] == [] and record(text)["text"] == reference_text(text)


def test_links_past_the_limit_stay_unmarked(monkeypatch):
    monkeypatch.setattr(L, "MAX_LINKS", 2)
    assert labelled("[[A]] [[B]] [[C]] szó.") == [("A", "A"), ("B", "B")]


@pytest.mark.parametrize("raw,title", [
    ("alma", "Alma"), ("New_York#History", "New York"), ("  Duna   folyó ", "Duna folyó"),
    ("AT&amp;T", "AT&T"), ("#Section", None), ("Fájl:x.jpg", None), ("en:Foo", None), ("", None),
])
def test_normalise_target(raw, title):
    assert L.normalise_target(raw) == title


def test_char_map_follows_a_few_changed_characters():
    a, b = "platformi .NET és  C", "platformi.NET és C"
    m = L._char_map(a, b)
    assert b[m[a.index(".NET")]:m[a.index(".NET") + 4]] == ".NET"
    assert b[m[a.index("C")]:] == "C" and m[len(a)] == len(b)


@pytest.mark.slow
def test_the_real_dumps_keep_their_text_byte_for_byte(shared_data):
    for name in ("ukwiki.xml.xz", "viwiki.xml.xz"):
        reader = DumpReader(shared_data / name)
        links = 0
        for page in reader.pages():
            if page_namespace(page, reader.siteinfo) != "0" or page.redirect:
                continue
            known, prefix = namespace_names(reader.siteinfo), reader.siteinfo.namespaces[10] + ":"
            drop = frozenset(v for k, v in reader.siteinfo.namespaces.items() if k in (-2, 6, 14) and v)
            try:
                rec = article_record(page.id, page.revid, page.title, page.text, "u", prefix, known, drop)
            except Exception:   # noqa: BLE001 - counted as wikiextractor_error by the stage
                continue
            if rec is not None:
                assert rec["text"] == reference_text(page.text, page.title, known, drop, prefix), page.title
                links += len(rec["links"])
        assert links > 30000, name
