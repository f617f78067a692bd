"""Is a paragraph prose? Lists, navigation boxes, chart data, galleries and reference lists are
not, whatever the script; `format` drops them (pipeline/text/cleaning.py).

Each rule judges a paragraph by its shape, never by one character alone (NFC makes the Greek
ano teleia "·" and Catalan "l·l" look like a navbox separator):
- list item: it starts with a bullet (* # • ▪ ◦ ● ■ ► ‣ ⁃ ‐ - –), or with "—" and does not end
  like a sentence (a dialogue line "— Чому ж?" is prose);
- navigation box: short items between spaced separators (two of " | ", " • ", " · ", or three
  counting " – " and " / "), and hardly any sentence end;
- chart or JSON data: it starts like JSON ({"key": or [ or "key":) or is mostly JSON punctuation;
- numbered item: "1) …";
- gallery or image map: "File.jpg|caption", "thumb|250px|caption", "rect 0 0 10 10 [[…]]";
- reference: a short paragraph with an ISBN, ISSN, DOI or URL in it (a bibliography entry).

Usage:
    non_prose_reason("* item")          # "list"
    non_prose_reason("Ιανουάριος · Φεβρουάριος · Μάρτιος · Απρίλιος")   # "navbox"
    non_prose_reason("Η Αθήνα είναι πόλη· έχει ιστορία.")                  # None
"""
from __future__ import annotations

import re

BULLETS = "*#•▪◦●■□►▸‣⁃‐·"
SENTENCE_ENDS = ".!?…。！？｡।॥۔؟։።။។៕;"
_SEPARATOR = re.compile(r" (?:\||•|·|–|/|\\|◦|∙|⋅|♦) ")
_STRONG_SEPARATOR = re.compile(r" [|•·] ")
_BARE_PIPE = re.compile(r"\S\|\S")
_JSON_START = re.compile(r"^\s*(?:[{\[]\s*(?:\"|$|[{\[\d])|\"[^\"]{1,60}\"\s*:)")
_JSON_CHARS = re.compile(r"[{}\[\]\":,]")
_MEDIA_LINE = re.compile(r"^[^|\n]{1,200}\.(?:jpe?g|png|svg|gif|tiff?|webp|webm|ogg|ogv|pdf|djvu)\s*(?:\||$)", re.I)
_IMAGEMAP = re.compile(r"^(?:rect|poly|circle|default|desc)\s+(?:\d|\[\[|top|bottom|none)", re.I)
_IMAGE_OPTIONS = re.compile(r"^(?:thumb|thumbnail|frame|frameless|border|left|right|center|upright|"
                            r"miniatur|mini|міні|\d+\s?(?:px|пкс))[^|]{0,20}\|", re.I)
_ENUMERATED = re.compile(r"^\d{1,2}\)\s")  # "1) відрізок …": a numbered list item
_REFERENCE = re.compile(r"\bIS[BS]N\b|\bdoi:|\bDOI\b|https?://|\bwww\.")
_REFERENCE_HINTS = ("IS", "doi", "DOI", "://", "www.")
_DIALOGUE_DASH = "—―"
MAX_REFERENCE_CHARS = 400


def non_prose_reason(p: str) -> str | None:
    """Why paragraph `p` (one line, stripped) is not prose, or None when it is."""
    first = p[0]
    if first in BULLETS or (first in "-–" and len(p) > 1 and p[1] == " "):
        return "list"
    if first in _DIALOGUE_DASH and p[-1] not in SENTENCE_ENDS and p.rstrip("»”\"')）」』")[-1:] not in SENTENCE_ENDS:
        return "list"
    if first in "{[\"" and _JSON_START.match(p):
        return "data"
    if ("|" in p or " · " in p or " • " in p or " – " in p or " / " in p) and _is_navbox(p):
        return "navbox"
    if first in "{[" or p.count('"') >= 6:
        if len(_JSON_CHARS.findall(p)) > 0.2 * len(p):
            return "data"
    if "." in p and _MEDIA_LINE.match(p):
        return "gallery"
    if first in "rpcdRPCD" and _IMAGEMAP.match(p):
        return "gallery"
    if "|" in p and _IMAGE_OPTIONS.match(p):
        return "gallery"
    if first.isdigit() and _ENUMERATED.match(p):
        return "list"
    if len(p) <= MAX_REFERENCE_CHARS and any(h in p for h in _REFERENCE_HINTS) and _REFERENCE.search(p):
        return "reference"
    return None


def _is_navbox(p: str) -> bool:
    """Short items between separators (two of "|", "•", "·"; three of any), with hardly any
    sentence end."""
    items = _SEPARATOR.split(p)
    if len(items) == 3 and not _STRONG_SEPARATOR.search(p):
        return False
    if len(items) < 3:
        items = p.split("|") if len(_BARE_PIPE.findall(p)) >= 3 else items
        if len(items) < 4:
            return False
    short = sum(1 for item in items if len(item.strip()) <= 40)
    ends = sum(1 for item in items if item.rstrip()[-1:] in SENTENCE_ENDS)
    allowed = max(1, len(items) // 4) if _STRONG_SEPARATOR.search(p) else len(items) // 4
    return short >= 0.75 * len(items) and ends <= allowed
