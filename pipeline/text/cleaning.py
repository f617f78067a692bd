"""Cleanup of one paragraph of wikiextractor output: markup it left behind, Unicode NFC.

Usage:
    clean_paragraph("A [[Duna|folyó]] {{lang|de|Donau}} hossza ()...")  -> "A folyó hossza..."
    clean_paragraph("{| class=wikitable")                                 -> None (dropped)
    format_article(["Lead.", "## History", "More."])                      -> ["Lead.", "More."]

wikiextractor leaves residue when markup is unbalanced or nested oddly: stray `{{`/`}}` and
`[[`/`]]`, table rows, `<ref>` and other tags, HTML entities, the `formula_1`/`codice_2`
placeholders it puts for <math>/<code>, and the empty brackets "(; ...)" where a template
(pronunciation, dates) stood; stress marks over Cyrillic letters go too. A paragraph that is
nothing but residue is dropped.
"""
from __future__ import annotations

import html
import re
import unicodedata

# Lines that are table or template syntax, not prose.
_TABLE_LINE = re.compile(r"^\s*(\{\||\|\}|\|-|\|\+|\||!)")
_REF = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref\s*>", re.I | re.S)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
_COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_PIPED_LINK = re.compile(r"\[\[(?:[^\[\]]*\|)?([^\[\]|]*)\]\]")  # the last part of [[a|b|c]]
_EXT_LINK = re.compile(r"\[(?:https?:)?//[^\s\]]+(?:\s+([^\]]*))?\]")
_PLACEHOLDER = re.compile(r"(?:formula|codice)_\d+\b")
_OPEN_JUNK = re.compile(r"\(\s*[,;:]+\s*|\(\s*[\u2013\u2014]\s+")  # "(; born" / "( — x" -> "(born" / "(x"
_CLOSE_JUNK = re.compile(r"\s*[,;:\u2013\u2014-]+\s*\)")     # "... —)" -> "...)"
_EMPTY_BRACKETS = re.compile(r"\s*(\(\s*\)|\[\s*\]|«\s*»|„\s*”|“\s*”|\"\s*\")")
_BRACKET_HINT = re.compile(r"[,;:\u2013\u2014-]\s*\)|\(\s*\)|\[\s*\]|«\s*»|„\s*”|“\s*”|\"\s*\"")
_SPACE_BEFORE_PUNCT = re.compile(r" ([,.;:!?])(?= |$)")  # after whitespace is collapsed
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\xad\u200b\ufeff]")
_LETTER = re.compile(r"[^\W\d_]")
# Stress marks over Cyrillic vowels (Ра́діус): a reading aid of lead sentences, not spelling;
# left in, they split words into pieces for the vocabulary.
_CYRILLIC_STRESS = re.compile("(?<=[\u0400-\u04ff])\u0301")


def clean_paragraph(text: str) -> str | None:
    """The cleaned paragraph (one line, NFC), or None when nothing readable is left."""
    if _TABLE_LINE.match(text):
        return None
    text = html.unescape(html.unescape(text))  # entities, incl. doubly escaped &amp;nbsp;
    text = _CONTROL.sub("", text)
    text = _COMMENT.sub("", text)
    text = _REF.sub("", text)
    text = _TAG.sub("", text)
    for _ in range(3):  # nested leftovers, innermost first
        new = _TEMPLATE.sub("", text)
        new = _PIPED_LINK.sub(r"\1", new)
        if new == text:
            break
        text = new
    text = _EXT_LINK.sub(lambda m: m.group(1) or "", text)
    text = text.replace("{{", "").replace("}}", "").replace("[[", "").replace("]]", "")
    text = text.replace("{|", "").replace("|}", "")
    if "formula_" in text or "codice_" in text:
        text = _PLACEHOLDER.sub("", text)
    for _ in range(2):
        text = _OPEN_JUNK.sub("(", text)
        if _BRACKET_HINT.search(text):  # the patterns below start with \s*: slow to try everywhere
            text = _CLOSE_JUNK.sub(")", text)
            text = _EMPTY_BRACKETS.sub("", text)
    text = " ".join(text.split())
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = unicodedata.normalize("NFC", text)
    if "\u0301" in text:
        text = _CYRILLIC_STRESS.sub("", text)
    if not _LETTER.search(text):
        return None
    if text.endswith(":") and ". " not in text:  # the lead-in of a list wikiextractor dropped
        return None
    return text


def format_article(paragraphs: list[str]) -> list[str]:
    """Clean paragraphs of one article; headings ("## ..." lines) dropped."""
    out = []
    for p in paragraphs:
        if p.startswith("## "):
            continue
        cleaned = clean_paragraph(p)
        if cleaned:
            out.append(cleaned)
    return out
