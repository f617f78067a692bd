"""Write data/sample/huwiki-sample.xml.bz2, the small Hungarian MediaWiki dump the project ships.

Usage:
    python data/sample/make_sample.py [--output data/sample/huwiki-sample.xml.bz2] [--xml]

The dump follows the export-0.10 schema of real Wikimedia dumps: a <siteinfo> with the
Hungarian namespaces, then pages carrying the wikitext real articles carry (infobox and
navigation templates, tables, <ref> references, internal and external links, files,
categories, lists, headings incl. an empty one), a redirect, a disambiguation page and pages in
other namespaces (Sablon:, Kategória:, Wikipédia:, Fájl:, Vita:). All text was written for the
project (no Wikipedia text is copied); articles combine a page-specific lead and section with
section paragraphs shared by pages of the same kind, filled with page-specific facts.

Deterministic: fixed timestamps and ids, no randomness but a seeded one, bz2 level 9, so the
same script always writes the same bytes (the test suite checks the shipped file against it).
"""
from __future__ import annotations

import argparse
import bz2
import hashlib
import random
import re
from pathlib import Path
from xml.sax.saxutils import escape

# The articles' text (run as a script, this folder is on sys.path).
from sample_text import (CITIES, CITY_SECTIONS, INFOBOX, INFOBOX_KEYS, NATURE, NATURE_SECTIONS,
                         PERSON_SECTIONS, PERSONS, THING_SECTIONS, THINGS)

HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "huwiki-sample.xml.bz2"

NAMESPACES = [
    (-2, "Média"), (-1, "Speciális"), (0, ""), (1, "Vita"), (2, "Szerkesztő"),
    (3, "Szerkesztővita"), (4, "Wikipédia"), (5, "Wikipédia-vita"), (6, "Fájl"), (7, "Fájlvita"),
    (8, "MediaWiki"), (9, "MediaWiki-vita"), (10, "Sablon"), (11, "Sablonvita"),
    (12, "Segítség"), (13, "Segítségvita"), (14, "Kategória"), (15, "Kategóriavita"),
    (90, "Téma"), (100, "Portál"), (101, "Portálvita"), (828, "Modul"), (829, "Modulvita"),
]


def az(word: str) -> str:
    """The Hungarian definite article before `word` ("az" before a vowel sound)."""
    return "az" if word[:1].lower() in "aáeéiíoóöőuúüű" else "a"


def infobox(kind: str, name: str, facts: dict) -> str:
    lines = [f"{{{{{INFOBOX[kind]}", f"| név = {name}"]
    for key, value in facts.items():
        lines.append(f"| {INFOBOX_KEYS.get(key, key)} = {value}")
    lines.append(f"| kép = {name.replace(' ', '_')}.jpg")
    lines.append("}}")
    return "\n".join(lines)


def ban_ben(number: str) -> str:
    """The inessive suffix of a number as Hungarians read it: 1823-ban, 1817-ben, 1900-ban."""
    n = int(number)
    back_units = {3, 6, 8}                      # három, hat, nyolc
    back_tens = {2, 3, 6, 8}                    # húsz, harminc, hatvan, nyolcvan
    if n % 10:
        return "ban" if n % 10 in back_units else "ben"
    if n % 100:
        return "ban" if n // 10 % 10 in back_tens else "ben"
    return "ban" if n % 1000 else "ben"         # száz / ezer


def fill(text: str, name: str, facts: dict) -> str:
    text = text.format(name=name, **facts)
    text = re.sub(r"\b(\d+)-b[ae]n\b", lambda m: f"{m.group(1)}-{ban_ben(m.group(1))}", text)
    # "a(z) X" -> the right article for X.
    while "a(z) " in text or "A(z) " in text:
        for marker, cap in (("a(z) ", False), ("A(z) ", True)):
            i = text.find(marker)
            if i >= 0:
                nxt = text[i + len(marker):]
                art = az(nxt)
                text = text[:i] + (art.capitalize() if cap else art) + " " + nxt
    return text


def linkify(text: str, rng: random.Random) -> str:
    """Turn some capitalised words into [[links]] (some piped), as article prose carries."""
    words = text.split(" ")
    out = []
    for w in words:
        core = w.rstrip(".,;:”")
        tail = w[len(core):]
        if len(core) > 4 and core[:1].isupper() and core.isalpha() and rng.random() < 0.35:
            core = f"[[{core}]]" if rng.random() < 0.6 else f"[[{core} (egyértelműsítés)|{core}]]"
        out.append(core + tail)
    return " ".join(out)


def reference(i: int, rng: random.Random) -> str:
    kinds = [
        f"<ref>{{{{Cite web |url=https://www.ksh.hu/adatok/{i} |title=Statisztikai adatok |accessdate=2021-01-05}}}}</ref>",
        f'<ref name="forras{i}">{{{{Cite book |author=Dr. Tóth Imre |title=Magyarország krónikája |publisher=Akadémiai Kiadó |year=1998 |pages={10 + i}–{12 + i}}}}}</ref>',
        f"<ref>[https://mek.oszk.hu/{1000 + i}/ Magyar Elektronikus Könyvtár], 2021. jan. 5.</ref>",
        f'<ref name="forras{max(1, i - 1)}" />',
    ]
    return kinds[rng.randrange(len(kinds))]


def article(idx: int, kind: str, name: str, facts: dict, lead: str, special: tuple, pool: list) -> str:
    rng = random.Random(f"sample-{idx}")
    parts = [infobox(kind, name, facts), lead + reference(idx, rng)]
    # Five of the shared sections, rotated by page so neighbours differ; the page's own section
    # goes in the middle.
    chosen = [pool[(idx + k) % len(pool)] for k in range(5)]
    sections = chosen[:2] + [special] + chosen[2:]
    for n, (title, text) in enumerate(sections):
        body = linkify(fill(text, name, facts), rng)
        if n % 2 == 0 and body.endswith("."):  # a reference before the paragraph's last full stop
            body = body[:-1] + reference(idx * 10 + n, rng) + "."
        parts.append(f"== {title} ==\n{body}")
        if n == 1:
            parts.append(f"[[Fájl:{name.replace(' ', '_')}_{n}.jpg|bélyegkép|jobbra|{name} egy régi képeslapon]]")
        if n == 2 and kind in ("city", "nature"):
            parts.append(
                "=== Adatok ===\n{| class=\"wikitable sortable\"\n|+ Főbb adatok\n|-\n! Év !! Érték\n"
                f"|-\n| 1990 || {rng.randint(1000, 9000)}\n|-\n| 2001 || {rng.randint(1000, 9000)}\n"
                f"|-\n| 2011 || {rng.randint(1000, 9000)}\n|}}"
            )
        if n == 3:
            parts.append("Nevezetességek:\n* [[Helytörténeti Múzeum]]\n* régi templom\n** barokk oltár\n# első emlék\n# második emlék")
    parts.append("== Galéria ==\n<gallery>\nFájl:Kep1.jpg|Első kép\nFájl:Kep2.jpg|Második kép\n</gallery>")
    parts.append("== Lásd még ==")  # an empty section, as real articles have
    parts.append("== Jegyzetek ==\n{{jegyzetek}}\n<references />")
    parts.append(f"== További információk ==\n* [https://www.example.hu/{idx} Hivatalos honlap]\n* {{{{Commonskat|{name}}}}}")
    parts.append("{{Nemzetközi katalógusok}}\n{{Portál|Magyarország}}")
    cat = {"city": "Magyarország városai", "nature": "Magyarország földrajza",
           "person": "Magyar személyek", "thing": "Magyar kultúra"}[kind]
    parts.append(f"[[Kategória:{cat}]]\n[[Kategória:{name}| ]]\n<!-- a szerkesztők megjegyzése: forrásokat bővíteni -->")
    return "\n\n".join(parts) + "\n"


def all_pages() -> list[tuple[int, str, str, bool]]:
    """(ns, title, wikitext, is_redirect) for every page, in dump order."""
    pages = []
    idx = 0
    for kind, rows, pool in (("city", CITIES, CITY_SECTIONS), ("nature", NATURE, NATURE_SECTIONS),
                             ("person", PERSONS, PERSON_SECTIONS), ("thing", THINGS, THING_SECTIONS)):
        for name, facts, lead, special in rows:
            idx += 1
            pages.append((0, name, article(idx, kind, name, facts, lead, special, pool), False))
            if idx == 3:  # pages of other namespaces in between, as in real dumps
                pages.append((10, "Sablon:Település infobox",
                              "<includeonly>{| class=\"infobox\"\n|+ {{{név}}}\n|-\n| Ország || {{{ország|Magyarország}}}\n|}</includeonly><noinclude>\nA sablon városok adatait jeleníti meg.\n[[Kategória:Infobox sablonok]]\n</noinclude>\n", False))
                pages.append((14, "Kategória:Magyarország városai",
                              "Ebbe a kategóriába tartoznak [[Magyarország]] városai.\n\n[[Kategória:Magyarország települései]]\n", False))
            if idx == 12:
                pages.append((0, "Pest-Buda", "#ÁTIRÁNYÍTÁS [[Budapest]]\n\n[[Kategória:Átirányítások]]\n", True))
                pages.append((4, "Wikipédia:Kezdőlap", "Üdvözlünk a '''Wikipédiában''', a szabad enciklopédiában, amelyet bárki szerkeszthet!\n", False))
            if idx == 20:
                pages.append((6, "Fájl:Szeged_0.jpg", "== Összefoglaló ==\n{{Információ\n|leírás = Szeged belvárosa\n|forrás = saját munka\n}}\n", False))
                pages.append((1, "Vita:Duna", "A folyó hosszáról eltérő adatok szerepelnek a forrásokban. --~~~~\n", False))
            if idx == 30:
                pages.append((0, "Tisza (egyértelműsítő lap)",
                              "A '''Tisza''' szó a következőkre utalhat:\n* [[Tisza]], folyó Közép-Európában\n* [[Tisza (hajó)]], gőzhajó\n* [[Tisza-tó]], mesterséges tó\n* [[Tisza István]], politikus\n\n{{egyért}}\n", False))
    return pages


def sha1_base36(text: str) -> str:
    n = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(31, "0")


def dump_xml() -> str:
    """The whole dump as an XML string."""
    ns_lines = []
    for key, name in NAMESPACES:
        if name:
            ns_lines.append(f'      <namespace key="{key}" case="first-letter">{escape(name)}</namespace>')
        else:
            ns_lines.append(f'      <namespace key="{key}" case="first-letter" />')
    out = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ '
        'http://www.mediawiki.org/xml/export-0.10.xsd" version="0.10" xml:lang="hu">',
        "  <siteinfo>",
        "    <sitename>Wikipédia</sitename>",
        "    <dbname>huwiki</dbname>",
        "    <base>https://hu.wikipedia.org/wiki/Kezd%C5%91lap</base>",
        "    <generator>MediaWiki 1.41.0-wmf.6</generator>",
        "    <case>first-letter</case>",
        "    <namespaces>",
        *ns_lines,
        "    </namespaces>",
        "  </siteinfo>",
    ]
    for i, (ns, title, text, redirect) in enumerate(all_pages()):
        page_id = 1000 + 7 * i
        out += [
            "  <page>",
            f"    <title>{escape(title)}</title>",
            f"    <ns>{ns}</ns>",
            f"    <id>{page_id}</id>",
        ]
        if redirect:
            target = text.split("[[", 1)[1].split("]]", 1)[0]
            out.append(f'    <redirect title="{escape(target)}" />')
        out += [
            "    <revision>",
            f"      <id>{20000000 + page_id}</id>",
            f"      <parentid>{19000000 + page_id}</parentid>",
            "      <timestamp>2023-05-01T12:00:00Z</timestamp>",
            "      <contributor>",
            "        <username>Mintaszerkesztő</username>",
            "        <id>4242</id>",
            "      </contributor>",
            "      <comment>a wiki2bert mintája</comment>",
            "      <model>wikitext</model>",
            "      <format>text/x-wiki</format>",
            f'      <text bytes="{len(text.encode("utf-8"))}" xml:space="preserve">{escape(text)}</text>',
            f"      <sha1>{sha1_base36(text)}</sha1>",
            "    </revision>",
            "  </page>",
        ]
    out.append("</mediawiki>")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--xml", action="store_true", help="write plain XML instead of bz2")
    args = parser.parse_args()
    data = dump_xml().encode("utf-8")
    if not args.xml:
        data = bz2.compress(data, compresslevel=9)
    args.output.write_bytes(data)
    articles = sum(1 for ns, _, _, r in all_pages() if ns == 0 and not r)
    wikitext = sum(len(t.encode()) for ns, _, t, r in all_pages() if ns == 0 and not r)
    print(f"wrote {args.output}: {len(data):,} bytes, {articles} articles, {wikitext:,} bytes of article wikitext")


if __name__ == "__main__":
    main()
