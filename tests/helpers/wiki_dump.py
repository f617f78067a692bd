"""Small MediaWiki XML dumps written by the tests: a siteinfo of the language and its pages;
the fixtures' dumps in scripts the hu sample does not cover (fixture_dump: ja, zh, th, hy)."""
from __future__ import annotations

import bz2
from pathlib import Path
from xml.sax.saxutils import escape


def page_xml(page_id: int, title: str, text: str) -> str:
    return (f"<page><title>{escape(title)}</title><ns>0</ns><id>{page_id}</id><revision><id>{page_id}</id>"
            f"<timestamp>2023-01-01T00:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki</format>"
            f"<text xml:space=\"preserve\">{escape(text)}</text></revision></page>")


def write_bz2_dump(path: Path, lang: str, pages: list[tuple[str, str]], dbname: str | None = None) -> None:
    """`pages`: (title, wikitext) of namespace-0 articles, ids from 1. The siteinfo's dbname is
    the wiki's (zh-yue -> zh_yuewiki) unless given; "" leaves it out."""
    dbname = lang.replace("-", "_") + "wiki" if dbname is None else dbname
    db = f"<dbname>{dbname}</dbname>" if dbname else ""
    xml = (f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="{lang}">'
           f"<siteinfo><sitename>W</sitename>{db}"
           f"<base>https://{lang}.wikipedia.org/wiki/Main</base><generator>MediaWiki 1.41</generator>"
           '<case>first-letter</case><namespaces><namespace key="0" case="first-letter" />'
           '<namespace key="14" case="first-letter">Category</namespace></namespaces></siteinfo>\n'
           + "\n".join(page_xml(i + 1, t, x) for i, (t, x) in enumerate(pages)) + "\n</mediawiki>\n")
    Path(path).write_bytes(bz2.compress(xml.encode("utf-8")))


def write_prose_dump(path: Path, lang: str, sentences: list[str], n_pages: int = 30, seed: int = 0,
                     joiner: str = " ") -> None:
    """A dump of `n_pages` articles of five paragraphs, each four of `sentences` with a linked
    year in it (distinct sentences, and links for the probe), an infobox, a heading, a reference
    and a category, as real articles have."""
    import random

    rng = random.Random(f"{lang}{seed}")

    def numbered(sentence: str) -> str:
        words = sentence.split(" ")
        at = rng.randrange(len(words))
        return " ".join(words[:at] + [f"[[{rng.randint(1000, 9999)}]]"] + words[at:])

    pages = []
    for i in range(n_pages):
        paras = [joiner.join(numbered(rng.choice(sentences)) for _ in range(4)) for _ in range(5)]
        body = ("{{Infobox city|name=X}}\n" + "\n\n".join(paras[:4]) + "\n\n== H ==\n" + paras[4]
                + "<ref>source</ref>\n[[Category:X]]")
        pages.append((f"P{i}", body))
    write_bz2_dump(path, lang, pages)


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "unspaced"
# Armenian: a script with spaces that no other fixture has
HY = ["Երևանը Հայաստանի մայրաքաղաքն է և ամենամեծ քաղաքը։", "Քաղաքը գտնվում է Հրազդան գետի ափին։",
      "Քաղաքում կան բազմաթիվ թանգարաններ և թատրոններ։", "Ամեն տարի քաղաք են այցելում հազարավոր զբոսաշրջիկներ։",
      "Քաղաքի կենտրոնում է գտնվում Հանրապետության հրապարակը։"]


def unspaced_dump(folder: Path, lang: str, joiner: str = "") -> Path:
    """LANGwiki.xml.bz2 in `folder`: 40 articles of tests/fixtures/unspaced/LANG.txt's sentences."""
    sentences = [s for s in (FIXTURES / f"{lang}.txt").read_text(encoding="utf-8").splitlines() if s.strip()]
    dump = folder / f"{lang}wiki.xml.bz2"
    write_prose_dump(dump, lang, sentences, n_pages=40, joiner=joiner)
    return dump


def fixture_dump(folder: Path, lang: str) -> Path:
    """The dump of `lang`'s fixture sentences: ja, zh, th (Thai's sentences between spaces), hy."""
    if lang == "hy":
        dump = folder / "hywiki.xml.bz2"
        write_prose_dump(dump, "hy", HY, n_pages=30)
        return dump
    return unspaced_dump(folder, lang, joiner=" " if lang == "th" else "")
