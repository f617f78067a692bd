"""Cleanup of one paragraph of wikiextractor output: markup it left behind, Unicode NFC.

Usage:
    clean_paragraph("A [[Duna|folyó]] hossza ()[3]...")      -> "A folyó hossza..."
    clean_paragraph("{| class=wikitable")                    -> None (dropped)
    format_article(["Lead.", "## History", "More."])         -> ["Lead.", "More."]
    format_article(paragraphs, dropped=Counter())            # counts why paragraphs went
    clean_paragraphs(paragraphs)                             # [(index, cleaned), ...]

wikiextractor leaves residue when markup is unbalanced or nested oddly: stray `{{`/`}}` and
`[[`/`]]`, table rows, `<ref>` and other tags, HTML entities, the `formula_1`/`codice_2`
placeholders it puts for <math>/<code>; footnote marks "[12]" and "[a]"; and holes where a
template stood: empty brackets of every script ("()", "（）", "「」", "« »", "„ “"), and
dangling commas right inside a bracket ("(, born", "（、"). All of it goes; stress marks over
Cyrillic letters too. A paragraph that is nothing but residue is dropped, so is one that is
not prose (lists, navigation boxes, data, galleries, references: pipeline/text/prose.py).
A paragraph ending in ":" leads into a list that extract dropped: its last sentence (the
lead-in) goes, found by the sentence ends of every script; the sentences before it stay. When
the next paragraph opens with a quotation mark, the lead-in introduces that quotation ("X said:")
and stays.
"""
from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator

from .brackets import repair_brackets
from .prose import non_prose_reason

# Lines that are table or template syntax, not prose.
_TABLE_LINE = re.compile(r"^\s*(\{\||\|\}|\|-|\|\+|\||!)")
_REF = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref\s*>", re.I | re.S)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
_COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_PIPED_LINK = re.compile(r"\[\[(?:[^\[\]]*\|)?([^\[\]|]*)\]\]")  # the last part of [[a|b|c]]
_EXT_LINK = re.compile(r"\[(?:https?:)?//[^\s\]]+(?:\s+([^\]]*))?\]")
_PLACEHOLDER = re.compile(r"(?:formula|codice)_\d+\b")
# Bracket pairs of every script; a hole is a pair with nothing but spaces and punctuation in it.
PAIRS = ("()", "[]", "（）", "「」", "『』", "【】", "〔〕", "《》", "〈〉", "«»", "‹›", "“”", "„“",
         "„”", "‘’", "\"\"", "﹁﹂", "〖〗")
_OPENERS = "".join(sorted({p[0] for p in PAIRS}))
_CLOSERS = "".join(sorted({p[1] for p in PAIRS}))
_FILLER = r"[\s,，、;；:：.·\-\u2013\u2014/]*"
_EMPTY_PAIR = re.compile(r"\s*(?:" + "|".join(re.escape(p[0]) + _FILLER + re.escape(p[1]) for p in PAIRS) + ")")
# A cheap superset of _EMPTY_PAIR (one character class each side), tried first.
_EMPTY_HINT = re.compile("[" + re.escape(_OPENERS) + r"]\s*[" + re.escape(_CLOSERS) + r",，、;；:：.·\-\u2013\u2014/]")
# "(, born" -> "(born"; "（、x" -> "（x"; "x, )" -> "x)"; "( — x" -> "(x"
_OPEN_JUNK = re.compile(r"([(（\[「『【〔《〈])\s*(?:[,，、;；:：]+|[\u2013\u2014](?=\s))\s*")
_CLOSE_JUNK = re.compile(r"(?<=\S)\s*(?:[,，、;；:：]+|\s[\u2013\u2014-])\s*([)）\]」』】〕》〉])")
# Cheap tests for them, tried first: a regex that starts with a common character (",", "-")
# tries a match at every one of them, so the closing side is checked by hand at each closer.
_OPEN_JUNK_HINT = re.compile(r"[(（\[「『【〔《〈]\s*[,，、;；:：\u2013\u2014]")
_CLOSER = re.compile(r"[)）\]」』】〕》〉]")
_JUNK_BEFORE_CLOSER = frozenset(",，、;；:：\u2013\u2014-")
# Footnote marks: "[12]", "[a]", "[note 3]", "[nb 1]" (a bracketed lower-case letter only when
# attached to the word or stop before it, so that "υ [y]" stays).
_FOOTNOTE = re.compile(r"\s?\[\s*(?:\d{1,3}|(?:note|nb|n|lower-alpha|upper-alpha)\s?\d{1,3})\s*\]"
                       r"|(?<=[^\s\[])\[[a-z]\]")
_SPACE_BEFORE_PUNCT = re.compile(r" ([,.;:!?])(?= |$)")  # after whitespace is collapsed
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\xad\u200b\ufeff]")
_LETTER = re.compile(r"[^\W\d_]")
# Stress marks over Cyrillic vowels (Ра́діус): a reading aid of lead sentences, not spelling;
# left in, they split words into pieces for the vocabulary.
_CYRILLIC_STRESS = re.compile("(?<=[\u0400-\u04ff])\u0301")
# Where a sentence ends, in every script: a stop before whitespace, or a stop of a script that
# does not put spaces between sentences (the splitter's own classes, pipeline/text/sentence_rules.py).
_LEAD_IN_CUT = re.compile(r"(?:[.!?…;؟۔।॥։᠃༎፧፨᱾꯫]+[\"'»”’)）\]」』]*\s+|[。！？｡።။។៕]+[」』）”’]*)(?=[^\s])")
LEAD_IN_ENDS = (":", "：")
QUOTE_OPENERS = "\"«“‘„‚‹「『〝"   # a paragraph opening with one of these is a quotation


def clean_paragraph(text: str, dropped: Counter | None = None, before_quote: bool = False) -> str | None:
    """The cleaned paragraph (one line, NFC), or None when nothing readable or no prose is left
    (`dropped` counts why, when given). `before_quote`: the next paragraph is a quotation, which
    a final ":" introduces (it is no list lead-in)."""
    def drop(reason: str) -> None:
        if dropped is not None:
            dropped[reason] += 1

    if _TABLE_LINE.match(text):
        return drop("table")
    text = html.unescape(html.unescape(text))  # entities, incl. doubly escaped &amp;nbsp;
    text = _CONTROL.sub("", text)
    text = _COMMENT.sub("", text)
    text = _REF.sub("", text)
    text = _TAG.sub("", text)
    if "{" in text or "}" in text or "[" in text or "]" in text:   # markup left by wikiextractor
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
    if "[" in text:
        text = _FOOTNOTE.sub("", text)
    text = unicodedata.normalize("NFC", _one_spaced(text))
    text = remove_holes(text)
    text = repair_brackets(text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    if "\u0301" in text:
        text = _CYRILLIC_STRESS.sub("", text)
    if not _LETTER.search(text):
        return drop("no_letters")
    if text.endswith(LEAD_IN_ENDS) and not before_quote:  # the lead-in of a list that extract dropped
        text = without_lead_in(text)
        if text is None:
            return drop("list_lead_in")
    reason = non_prose_reason(text)
    if reason:
        return drop(reason)
    return text


def remove_holes(text: str) -> str:
    """Empty brackets and quotes of every script, and dangling commas inside brackets, removed."""
    for _ in range(3):  # "( ( ) )": a removal can leave a new hole
        new = text
        if _junk_hint(new):
            new = _OPEN_JUNK.sub(r"\1", new)
            new = _CLOSE_JUNK.sub(r"\1", new)
        if _EMPTY_HINT.search(new):
            new = _EMPTY_PAIR.sub("", new)
        if new == text:
            break
        text = new
    return " ".join(text.split()) if "  " in text else text.strip()


def _one_spaced(text: str) -> str:
    """Whitespace runs as one space, none at the ends (split-join only where needed: most
    paragraphs need nothing, and isprintable is false for every whitespace but " ")."""
    if not text.isprintable() or "  " in text or text[:1] == " " or text[-1:] == " ":
        return " ".join(text.split())
    return text


def _junk_hint(text: str) -> bool:
    """Might _OPEN_JUNK or _CLOSE_JUNK match (a superset test)?"""
    if _OPEN_JUNK_HINT.search(text):
        return True
    for m in _CLOSER.finditer(text):
        i = m.start()
        before = text[i - 1] if i else ""
        if before in _JUNK_BEFORE_CLOSER or (before.isspace() and i > 1 and text[i - 2] in _JUNK_BEFORE_CLOSER):
            return True
    return False


def without_lead_in(text: str) -> str | None:
    """`text` without its last sentence (the lead-in ending in ":"), None if it has only that."""
    cut = None
    for m in _LEAD_IN_CUT.finditer(text):
        cut = m.end()
    if cut is None:
        return None
    return text[:cut].rstrip()


def format_article(paragraphs: list[str], dropped: Counter | None = None) -> list[str]:
    """Clean paragraphs of one article; headings ("## ..." lines) dropped; `dropped` counts the
    paragraphs that went, by reason."""
    return [cleaned for _i, cleaned in clean_paragraphs(paragraphs, dropped)]


def clean_paragraphs(paragraphs: list[str], dropped: Counter | None = None) -> list[tuple[int, str]]:
    """format_article's paragraphs, each with its index in `paragraphs`."""
    return list(iter_clean_paragraphs(paragraphs, dropped))


def iter_clean_paragraphs(paragraphs: list[str], dropped: Counter | None = None) -> Iterator[tuple[int, str]]:
    """clean_paragraphs one paragraph at a time (has_text stops at the first)."""
    for i, p in enumerate(paragraphs):
        if p.startswith("## "):
            continue
        nxt = paragraphs[i + 1].lstrip() if i + 1 < len(paragraphs) else ""
        cleaned = clean_paragraph(p, dropped, before_quote=nxt[:1] in QUOTE_OPENERS and nxt[:1] != "")
        if cleaned:
            yield i, cleaned


def has_text(paragraphs: list[str]) -> bool:
    """Whether format keeps the article (format_article gives a paragraph), cleaning only up to
    the first paragraph that survives."""
    return next(iter_clean_paragraphs(paragraphs), None) is not None


def clean_fragment(text: str) -> str:
    """A piece of a paragraph (a link's label) as clean_paragraph leaves such text: entities,
    control characters, runs of whitespace, NFC, Cyrillic stress marks."""
    text = _CONTROL.sub("", html.unescape(html.unescape(text))) if "&" in text else _CONTROL.sub("", text)
    text = unicodedata.normalize("NFC", " ".join(text.split()))
    return _CYRILLIC_STRESS.sub("", text) if "\u0301" in text else text
