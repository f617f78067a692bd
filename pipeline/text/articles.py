"""Articles in and out of wikiextractor: which pages are articles, their wikitext turned into
text with wikiextractor's own Extractor, and reading what extract wrote.

Usage:
    known = namespace_names(reader.siteinfo); page_namespace(page, reader.siteinfo) == "0"
    info = extract_pages((path, urlbase, template_prefix, known, [(id, revid, title, wikitext)]))
    for title, paragraphs in read_articles(path): ...   # JSON lines or classic <doc> blocks

Extracted text holds one paragraph per line and section headings as lines starting "## ".
Templates are not expanded: expansion needs the dump's Template: pages in memory in every
worker and a second pass over the dump, and what it adds to plain text is mostly infobox and
navigation-box residue; they are dropped, as wikiextractor --no-templates does.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from common.atomic import atomic_open
from pipeline.core.errors import StageError

from .links import clean_with_links, mark_links
from .wikitext import WikitextRewriter

# Canonical (English) namespace names, valid on every wiki besides the local names.
CANONICAL_NAMESPACES = {
    -2: "Media", -1: "Special", 1: "Talk", 2: "User", 3: "User talk", 4: "Project", 5: "Project talk",
    6: "File", 7: "File talk", 8: "MediaWiki", 9: "MediaWiki talk", 10: "Template",
    11: "Template talk", 12: "Help", 13: "Help talk", 14: "Category", 15: "Category talk",
    100: "Portal", 828: "Module",
}
EXTRA_PREFIXES = {"Image", "Image talk", "Wikipedia", "WP"}


def namespace_names(siteinfo) -> set[str]:
    """Every namespace prefix of the wiki: its local names and the canonical English ones."""
    names = {n for n in siteinfo.namespaces.values() if n}
    names |= set(CANONICAL_NAMESPACES.values()) | EXTRA_PREFIXES
    return names


def page_namespace(page, siteinfo) -> str:
    """The page's <ns>; very old exports have none, then the title's prefix decides."""
    if page.ns:
        return page.ns
    prefix, colon, _ = page.title.partition(":")
    if colon:
        for key, name in siteinfo.namespaces.items():
            if name and name == prefix:
                return str(key)
    return "0"


def dropped_link_prefixes(siteinfo) -> frozenset[str]:
    """The local names of the file and category namespaces: links to them are not text."""
    return frozenset(n for k, n in siteinfo.namespaces.items() if k in (-2, 6, 14) and n)


@lru_cache(maxsize=16)
def _rewriter(drop_prefixes: frozenset, template_prefix: str) -> WikitextRewriter:
    return WikitextRewriter(drop_prefixes, template_prefix)


def article_record(pid, revid, title: str, text: str, urlbase: str, template_prefix: str,
                   known: set[str], drop_prefixes: frozenset = frozenset()) -> dict | None:
    """One page's wikitext -> its extract record {"id", "revid", "url", "title", "text", "links"},
    or None when no paragraph is left. Raises whatever wikiextractor raises on a pathological
    page. "links": [[start, end, target], ...], character offsets into "text" of the labels of
    the page's article links (pipeline/text/links.py).

    Inline templates, colon links and emphasis are rewritten first (pipeline/text/wikitext.py),
    `drop_prefixes` being the wiki's file and category namespace names (dropped_link_prefixes)."""
    from wikiextractor.extract import Extractor

    text = _rewriter(frozenset(drop_prefixes), template_prefix)(text)
    extractor = Extractor(pid, revid, urlbase, title, [text], templatePrefix=template_prefix,
                          knownNamespaces=known, keepSections=True)
    paragraphs, links = clean_with_links(extractor, text, *mark_links(text))
    if not any(p.strip() and not p.startswith("## ") for p in paragraphs):
        return None
    body = "\n".join(p for p in paragraphs if p.strip())
    return {"id": pid, "revid": revid, "url": extractor.url, "title": title, "text": body,
            "links": links}


def extract_pages(job: tuple) -> dict:
    """Turn pages into one JSON-lines file (atomic); returns its counts.

    job: (output path, urlbase, template prefix, known namespace names, pages[, file and category
    namespace names]), each page an (id, revid, title, wikitext) tuple. A page wikiextractor
    fails on is counted, never fatal.
    """
    logging.getLogger("wikiextractor").setLevel(logging.ERROR)
    path, urlbase, template_prefix, known, pages = job[:5]
    drop_prefixes = job[5] if len(job) > 5 else frozenset()
    written = empty = failed = 0
    with atomic_open(path) as out:
        for pid, revid, title, text in pages:
            try:
                record = article_record(pid, revid, title, text, urlbase, template_prefix, known,
                                        drop_prefixes)
            except Exception:  # noqa: BLE001 - one pathological page must not sink a whole dump
                failed += 1
                continue
            if record is None:
                empty += 1
                continue
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return {"articles": written, "empty": empty, "failed": failed, "bytes": Path(path).stat().st_size}


def read_articles(path: Path) -> Iterator[tuple[str, list[str]]]:
    """Yield (title, [paragraph lines]) from a wikiextractor file, JSON lines or <doc> blocks."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = None
            for lineno, line in enumerate(fh, 1):
                if doc is None and line.startswith("{"):
                    try:
                        rec = json.loads(line)
                        yield rec.get("title", ""), rec["text"].split("\n")
                    except (json.JSONDecodeError, KeyError, AttributeError):
                        raise StageError(f"{path} line {lineno} is not a wikiextractor JSON record "
                                         "with a 'text' field: is --input the output of extract?") from None
                elif line.startswith("<doc ") or line.startswith("<doc>"):
                    doc = []
                elif line.startswith("</doc>") and doc is not None:
                    title = doc[0] if doc else ""
                    yield title, doc[1:]
                    doc = None
                elif doc is not None:
                    doc.append(line.rstrip("\n"))
                elif line.strip():
                    raise StageError(f"{path} line {lineno} is neither wikiextractor JSON nor a <doc> "
                                     "block: is --input the output of extract?")
    except UnicodeDecodeError as exc:
        raise StageError(f"{path} is not UTF-8 text (bad byte at offset {exc.start}): "
                         "is --input the output of extract?") from None
