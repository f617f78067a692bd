"""Write data/sample/huwiki-sample.xml.bz2, the small Hungarian MediaWiki dump the project ships.

Usage:
    python data/sample/make_sample.py [--output data/sample/huwiki-sample.xml.bz2] [--xml]

The dump follows the export-0.10 schema of real Wikimedia dumps: a <siteinfo> with the
Hungarian namespaces, then pages carrying the wikitext real articles carry (infobox and
navigation templates, tables, <ref> references, internal and external links, files,
categories, lists, headings incl. an empty one), a redirect, a disambiguation page and pages in
other namespaces (Sablon:, Kategória:, Wikipédia:, Fájl:, Vita:). All text was written for the
project (no Wikipedia text is copied); articles combine a page-specific lead and section
(sample_text.py) with sections shared by pages of the same kind (sample_sections.py): one of
each sentence's phrasings, filled with the page's facts. No sentence is in two articles (the
script stops if one is), so the corpus loses nothing to the filter's repeated-line rule. Names
become internal links at an article's first mention of them, later mentions stay plain text.

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
from sample_sections import CITY_SECTIONS, LINKS, NATURE_SECTIONS, PERSON_SECTIONS, THING_SECTIONS
from sample_text import CITIES, INFOBOX, INFOBOX_KEYS, NATURE, PERSONS, THINGS

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
    """The Hungarian definite article before `word` ("az" before a vowel sound; numbers as
    they are read: "az 1849" is "az ezernyolcszáz...", "az 5" is "az öt")."""
    digits = re.match(r"\d+", word)
    if digits:
        n = digits.group(0)
        return "az" if n[0] == "5" or (n[0] == "1" and len(n) in (1, 4, 7)) else "a"
    return "az" if word[:1].lower() in "aáeéiíoóöőuúüű" else "a"


def infobox(kind: str, name: str, facts: dict) -> str:
    lines = [f"{{{{{INFOBOX[kind]}", f"| név = {name}"]
    for key, value in facts.items():
        if key in INFOBOX_KEYS:
            lines.append(f"| {INFOBOX_KEYS[key]} = {value}")
    lines.append(f"| kép = {name.replace(' ', '_')}.jpg")
    lines.append("}}")
    return "\n".join(lines)


def back_vowel(number: str) -> bool:
    """Whether a number, read out, ends in a back-vowel word (takes -ban, -ból, -ra): 1823
    (három), 1900 (száz); 1817 (hét) and 2000 (ezer) take -ben, -ből, -re."""
    n = int(number)
    if n % 10:
        return n % 10 in {3, 6, 8}                  # három, hat, nyolc
    if n % 100:
        return n // 10 % 10 in {2, 3, 6, 8}         # húsz, harminc, hatvan, nyolcvan
    return bool(n % 1000)                           # száz / ezer


SUFFIXES = {"ban": "ben", "ból": "ből", "ba": "be", "ra": "re"}   # back -> front


def suffixed(match: re.Match) -> str:
    number, suffix = match.group(1), match.group(2)
    back = next((b for b, f in SUFFIXES.items() if suffix in (b, f)))
    return f"{number}-{back if back_vowel(number) else SUFFIXES[back]}"


MONTHS = ["jan.", "febr.", "márc.", "ápr.", "máj.", "jún.", "júl.", "aug.", "szept.", "okt.",
          "nov.", "dec."]


def day_suffix(day: int) -> str:
    """The superessive of a day as Hungarians read it: 1-jén, 2-án, 5-én, 10-én, 20-án."""
    if day == 1:
        return "jén"
    if day % 10:
        return "án" if day % 10 in {2, 3, 6, 8} else "én"
    return "én" if day == 10 else "án"


def page_values(facts: dict) -> dict:
    """A page's facts, each also with a capital first letter ({Loc})."""
    return facts | {k[:1].upper() + k[1:]: v[:1].upper() + v[1:] for k, v in facts.items()}


def a_date(rng: random.Random) -> str:
    """A recent date as a Hungarian sentence has it: "2019. márc. 15-én"."""
    day = rng.randint(1, 28)
    return f"{rng.randint(2012, 2023)}. {rng.choice(MONTHS)} {day}-{day_suffix(day)}"


def fill(text: str, name: str, values: dict) -> str:
    text = text.format(name=name, **values)
    text = re.sub(r"\b(\d+)-(ban|ben|ból|ből|ba|be|ra|re)\b", suffixed, text)
    # "a(z) X" -> the right article for X (links and italics looked through).
    for marker, cap in (("a(z) ", False), ("A(z) ", True)):
        while marker in text:
            i = text.find(marker)
            nxt = text[i + len(marker):]
            art = az(re.sub(r"^(\[\[([^|\]]*\|)?|'')+", "", nxt))
            text = text[:i] + (art.capitalize() if cap else art) + " " + nxt
    return text


LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def plain(text: str) -> str:
    """Wikitext prose as a reader sees it: links become their text, no bold or italics."""
    return LINK.sub(lambda m: m.group(2) or m.group(1), text).replace("'''", "").replace("''", "")


def autolink(text: str, title: str) -> str:
    """Link the names of LINKS in prose (outside existing links), except the page's own."""
    names = sorted((n for n, target in LINKS.items() if target != title), key=len, reverse=True)
    pattern = re.compile(r"(?<![\w\-–])(" + "|".join(map(re.escape, names)) + r")(?![\w\-–])")
    parts = LINK.split(text)            # prose, target, label, prose, ...
    out = []
    for i in range(0, len(parts), 3):
        out.append(pattern.sub(lambda m: link(LINKS[m.group(1)], m.group(1)), parts[i]))
        if i + 1 < len(parts):
            out.append(link(parts[i + 1], parts[i + 2] or parts[i + 1]))
    return "".join(out)


def link(target: str, label: str) -> str:
    return f"[[{target}]]" if target == label else f"[[{target}|{label}]]"


def first_links_only(paragraphs: list[str]) -> list[str]:
    """Keep the first link to each target of an article; later mentions become plain text."""
    seen = set()

    def one(m: re.Match) -> str:
        target = m.group(1)[:1].upper() + m.group(1)[1:]
        if target in seen:
            return m.group(2) or m.group(1)
        seen.add(target)
        return m.group(0)

    return [LINK.sub(one, p) for p in paragraphs]


def shared_section(sentences: list, name: str, values: dict, rng: random.Random, seen: dict) -> str:
    """One phrasing of each sentence, filled with the page's facts; a sentence that another page
    already has (its phrasing names none of this page's own facts) is an error."""
    out = []
    for phrasings in sentences:
        sentence = fill(rng.choice(phrasings), name, values | {"date": a_date(rng)})
        key = plain(sentence)
        if key in seen:
            raise ValueError(f"{name}: the sentence {key!r} is also in {seen[key]}: name a fact of the page")
        seen[key] = name
        out.append(sentence)
    return " ".join(out)


def reference(i: int, rng: random.Random) -> str:
    kinds = [
        f"<ref>{{{{Cite web |url=https://www.ksh.hu/adatok/{i} |title=Statisztikai adatok |accessdate=2021-01-05}}}}</ref>",
        f'<ref name="forras{i}">{{{{Cite book |author=Dr. Tóth Imre |title=Magyarország krónikája |publisher=Akadémiai Kiadó |year=1998 |pages={10 + i}–{12 + i}}}}}</ref>',
        f"<ref>[https://mek.oszk.hu/{1000 + i}/ Magyar Elektronikus Könyvtár], 2021. jan. 5.</ref>",
        f'<ref name="forras{max(1, i - 1)}" />',
    ]
    return kinds[rng.randrange(len(kinds))]


def article(idx: int, kind: str, name: str, facts: dict, lead: str, special: tuple, pool: list,
            seen: dict) -> str:
    rng = random.Random(f"sample-{idx}")
    values = page_values(facts)
    # Five of the shared sections, rotated by page so neighbours differ, in the pool's order (a
    # life before its end); the page's own section goes in the middle.
    chosen = [pool[i] for i in sorted((idx + k) % len(pool) for k in range(5))]
    sections = [(title, shared_section(sentences, name, values, rng, seen)) for title, sentences in chosen]
    sections = sections[:2] + [special] + sections[2:]
    lead, *bodies = first_links_only([autolink(lead, name)] + [autolink(b, name) for _, b in sections])
    parts = [infobox(kind, name, facts), lead + reference(idx, rng)]
    for n, ((title, _), body) in enumerate(zip(sections, bodies)):
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
    seen: dict = {}     # every shared sentence -> the page that has it
    for kind, rows, pool in (("city", CITIES, CITY_SECTIONS), ("nature", NATURE, NATURE_SECTIONS),
                             ("person", PERSONS, PERSON_SECTIONS), ("thing", THINGS, THING_SECTIONS)):
        for name, facts, lead, special in rows:
            idx += 1
            pages.append((0, name, article(idx, kind, name, facts, lead, special, pool, seen), False))
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
