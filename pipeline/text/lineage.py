"""Where each document of the filtered corpus came from, found again without running a stage
anew: its article in extract's output (id, title, url), its paragraphs and its sentences.

Every text stage keeps the order of the documents of a file and writes them to the file of the
same name (format: `AA/wiki_00` -> `AA_wiki_00.txt`; dedup prefixes the source,
`wikipedia__AA_wiki_00.txt`; split and filter keep the name), so one file is followed through
the stages in step, one file of each stage in memory at a time:

- format drops the articles whose every paragraph cleans away. Where a file's counts of
  articles and documents agree none was dropped; otherwise `has_text` (format's own rule,
  cleaning up to the first paragraph that survives) says which were.
- dedup drops documents and paragraphs, filter drops documents and lines (repeats of earlier
  lines of the corpus): a kept document comes from the first document after the previous match
  whose lines hold its lines in order.
- split cuts each paragraph into sentences, pieces of the paragraph's text: each is found in
  its paragraph, so an article's text keeps its paragraphs and the separators between its
  sentences (a space, or none in scripts without spaces).

Usage:
    chain = FileChain(filtered=..., sentences=..., paragraphs=..., formatted=..., extracted=...)
    for doc in chain_documents(chain, lang="uk"):
        doc.id, doc.title, doc.url, doc.source, doc.sentences, doc.text
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlparse

from pipeline.core.errors import StageError
from pipeline.core.sources import WIKIPEDIA

from .cleaning import has_text
from .documents import documents, read_utf8

PARAGRAPH_SEPARATOR = "\n\n"   # between the paragraphs of an article's text
_DOC_HEADER = re.compile(r'<doc\s([^>]*)>')
_ATTR = re.compile(r'(\w+)="([^"]*)"')


@dataclass(frozen=True)
class FileChain:
    """The files of one name through the stages: what filter wrote, what it read (split's
    output), what split read (formatted/ or deduped/), and where those documents came from:
    Wikipedia's formatted file and extract's file, or an ingested file of another source."""

    filtered: Path
    sentences: Path
    paragraphs: Path
    source: str = WIKIPEDIA
    formatted: Path | None = None    # set when `paragraphs` is dedup's file of Wikipedia's
    extracted: Path | None = None
    ingested: Path | None = None


@dataclass(frozen=True)
class Document:
    """A document of the filtered corpus with its article."""

    id: str
    title: str | None
    url: str | None
    source: str
    sentences: list[str]
    text: str


def chain_documents(chain: FileChain, lang: str) -> Iterator[Document]:
    """The documents of `chain.filtered` in order, each with its article (see the module doc)."""
    kept = list(documents(read_utf8(chain.filtered)))
    split_docs = list(documents(read_utf8(chain.sentences)))
    para_docs = list(documents(read_utf8(chain.paragraphs)))
    if len(split_docs) != len(para_docs):
        raise _changed(chain.sentences, chain.paragraphs, "split")
    origins = _origins(chain, para_docs, lang)
    for doc, (j, lines) in zip(kept, match_kept(kept, split_docs, chain.filtered, chain.sentences)):
        ident, title, url = origins[j]
        paras = para_docs[j]
        places = sentence_places(split_docs[j], paras)
        yield Document(ident, title, url, chain.source, doc, article_text(doc, lines, places, paras))


def _origins(chain: FileChain, para_docs: list[list[str]], lang: str) -> list[tuple[str, str | None, str | None]]:
    """(id, title, url) of each document of split's input file."""
    if chain.source != WIKIPEDIA:
        if chain.ingested is None:
            raise StageError(f"{chain.paragraphs}: the ingested file of source {chain.source!r} is "
                             "missing: rerun `pipeline ingest` (or keep ingested/ when cleaning)")
        base = list(documents(read_utf8(chain.ingested)))
        stem = chain.ingested.stem.split("__", 1)[-1]
        return [(f"{chain.source}:{stem}:{i}", None, None)
                for i, _ in match_kept(para_docs, base, chain.paragraphs, chain.ingested)]
    records = article_records(chain.extracted) if chain.extracted is not None else None
    if records is None:
        raise StageError(f"{chain.paragraphs}: extract's file for it is missing: export reads "
                         "extracted/ for the articles' ids and titles (rerun `pipeline extract`)")
    formatted = chain.formatted or chain.paragraphs
    if chain.formatted is not None:
        base = list(documents(read_utf8(chain.formatted)))
        which = [i for i, _ in match_kept(para_docs, base, chain.paragraphs, chain.formatted)]
        n_formatted = len(base)
    else:
        which, n_formatted = list(range(len(para_docs))), len(para_docs)
    articles = kept_articles(records, n_formatted, chain.extracted, formatted)
    out = []
    for i in which:
        rec = records[articles[i]]
        out.append((str(rec["id"]), rec["title"], article_url(rec, lang)))
    return out


def article_records(path: Path) -> list[dict]:
    """extract's records of one file: id, title, url and the paragraph lines (JSON lines, or
    wikiextractor's classic <doc id=.. url=.. title=..> blocks)."""
    records: list[dict] = []
    current = None
    for line in read_utf8(path).split("\n"):
        if current is None and line.startswith("{"):
            try:
                rec = json.loads(line)
                records.append({"id": rec.get("id", ""), "title": rec.get("title", ""),
                                "url": rec.get("url", ""), "lines": rec["text"].split("\n")})
            except (json.JSONDecodeError, KeyError, AttributeError):
                raise StageError(f"{path} holds a line that is not a wikiextractor JSON record: "
                                 "rerun `pipeline extract`") from None
        elif current is None and (m := _DOC_HEADER.match(line)):
            attrs = dict(_ATTR.findall(m.group(1)))
            current = {"id": attrs.get("id", ""), "title": attrs.get("title", ""),
                       "url": attrs.get("url", ""), "lines": []}
        elif current is not None and line.startswith("</doc>"):
            current["lines"] = current["lines"][1:]   # the title line, as format reads it
            records.append(current)
            current = None
        elif current is not None:
            current["lines"].append(line)
    return records


def kept_articles(records: list[dict], n_docs: int, extracted: Path, formatted: Path) -> list[int]:
    """The index in `records` of each of format's `n_docs` documents of this file."""
    if len(records) == n_docs:
        return list(range(n_docs))
    kept = [i for i, rec in enumerate(records) if has_text(rec["lines"])]
    if len(kept) != n_docs:
        raise _changed(formatted, extracted, "format")
    return kept


def match_kept(kept: list[list[str]], docs: list[list[str]], kept_file: Path,
               docs_file: Path) -> list[tuple[int, list[int]]]:
    """For each kept document, in order, (the index of the document of `docs` it was cut
    from, the index there of each of its lines): the first document after the previous match
    whose lines hold its lines in order."""
    out, j = [], 0
    for doc in kept:
        while j < len(docs):
            where = subsequence(doc, docs[j])
            if where is not None:
                break
            j += 1
        else:
            raise _changed(kept_file, docs_file, "")
        out.append((j, where))
        j += 1
    return out


def subsequence(lines: list[str], within: list[str]) -> list[int] | None:
    """The indices in `within` of `lines`, taken in order (the first fit), or None."""
    if lines == within:
        return list(range(len(lines)))
    if len(lines) > len(within):
        return None
    out, k = [], 0
    for i, line in enumerate(within):
        if line == lines[k]:
            out.append(i)
            k += 1
            if k == len(lines):
                return out
    return None


def sentence_places(sentences: list[str], paragraphs: list[str]) -> list[tuple[int, int, int]]:
    """(paragraph, start, end) of each sentence in the paragraphs it was cut from; start and
    end -1 where a sentence is not found as it is (it then stays in the paragraph before)."""
    places, p, cursor = [], 0, 0
    for s in sentences:
        for q in range(p, len(paragraphs)):
            at = paragraphs[q].find(s, cursor if q == p else 0)
            if at >= 0:
                p, cursor = q, at + len(s)
                places.append((q, at, cursor))
                break
        else:
            places.append((min(p, len(paragraphs) - 1), -1, -1))
    return places


def article_text(kept: list[str], lines: list[int], places: list[tuple[int, int, int]],
                 paragraphs: list[str]) -> str:
    """The kept sentences as text: paragraphs kept (PARAGRAPH_SEPARATOR between them), each
    sentence after the separator it had in its paragraph (a space where that is unknown)."""
    paras: list[list[str]] = []
    last_para = None
    for sentence, i in zip(kept, lines):
        para, start, _end = places[i]
        if para != last_para:
            paras.append([sentence])
            last_para = para
            continue
        before = places[i - 1] if i > 0 else None
        if before is not None and before[0] == para and before[2] >= 0 and start >= 0:
            sep = paragraphs[para][before[2]:start]
        else:
            sep = " "
        paras[-1].append(sep + sentence)
    return PARAGRAPH_SEPARATOR.join("".join(p) for p in paras)


def article_url(record: dict, lang: str) -> str:
    """https://HOST/wiki/Title: the host of extract's url (the dump's own wiki), else the
    language's Wikipedia; the title with '_' for spaces, percent-encoded as MediaWiki does."""
    host = urlparse(record.get("url") or "").netloc or f"{lang}.wikipedia.org"
    title = (record.get("title") or "").replace(" ", "_")
    return f"https://{host}/wiki/{quote(title, safe=':/()!,;@$*~' + chr(39))}"


def _changed(later: Path, earlier: Path, stage: str) -> StageError:
    what = f"`pipeline {stage}`" if stage else "the stages"
    return StageError(f"{later} does not follow from {earlier}: the stages' outputs disagree "
                      f"(was one rerun without the stages after it?): rerun {what} and the "
                      "stages after it with --force, then export")
