"""Internal links carried through wikiextractor: where each link's label lands in the text.

Before wikiextractor runs, every namespace-0 link of the (rewritten) wikitext is wrapped in
two private-use characters that carry its number n, `U+E000+n [[Target|label]]trail U+EC80+n`,
the targets kept aside in order (n < MAX_LINKS = 3,200; later links of a giant list page stay
unmarked). wikiextractor turns
the link into its label as it always does; the markers ride along with it, or vanish with
whatever it drops (a table, a reference, an image caption). Afterwards the markers are taken out
of its output and their positions become character offsets into the record's text:
`links: [[start, end, target], ...]`. A marker whose partner was dropped drops its link; no
marker is ever left in the text.

The text must be byte-identical to what wikiextractor writes without markers. Markers sit
outside the link's brackets, so wikiextractor's label rules (last pipe, stripped label, its \\w
trail) see what they always saw; but its last cleanup steps (collapse double spaces, drop a
space before a comma, ",," -> ",", punctuation-only lines) look at neighbouring characters, and
a marker between two of them hides a pattern. When a marker sits at such a place (or on a line
left with no word character) the page is cleaned once more without markers, and the links are
mapped onto that text line by line (pages where this happens are rare: 3 in 100 on ukwiki
and viwiki).

What is a link here: `[[Target]]`, `[[Target|label]]`, `[[Target#Section|label]]`, with the
letters glued after it (`[[apple]]s`: the label is "apples", as MediaWiki renders it). Not:
links with a colon in the target (files, categories, other wikis; the rewriter has already
turned `[[:en:X|Y]]` into plain text), links to a section of the same page (`[[#History]]`),
links inside <nowiki>, <math>, comments and the like. A page that already holds private-use
characters (U+E000..U+F8FF, some wikis' icon fonts) gets no links, never a confused text.

Usage:
    marked, targets = mark_links(rewritten_wikitext)
    paragraphs, links = clean_with_links(extractor, rewritten_wikitext, marked, targets)
    normalise_target("new_york#History")      # "New york"
"""
from __future__ import annotations

import bisect
import functools
import html
import itertools
import re

from .wikitext import map_unprotected

# A link's opening marker is U+E000 + n, its closing one U+EC80 + n (n: the link's number).
# Characters of the Basic Multilingual Plane: a marker never makes Python store the page with
# 4 bytes a character (it would slow wikiextractor's string building by a third).
OPEN, CLOSE = 0xE000, 0xEC80
MAX_LINKS = CLOSE - OPEN   # 3,200: later links of a giant page (a list) stay unmarked
MARKERS = re.compile("[\ue000-\uf8ff]")
_MARKER_SPLIT = re.compile("([\ue000-\uf8ff])")
# An innermost link (no brackets inside), its label on one line, and the letters glued after it.
_NS0_LINK = re.compile(r"(\[\[([^\[\]|\n{}<>]+)(?:\|[^\[\]\n]*)?\]\][^\W\d_]*)")
# Two characters that wikiextractor's last cleanup would change had they touched: "  ", " ,",
# "( ", ",,", ",.", "..", "<<", "{{" ... (a tab counts as a space).
_JOINED = frozenset([a + b for a in " \t" for b in " \t,:.)]»"] + [a + b for a in "[(«" for b in " \t"]
                    + [",,", ",.", "..", "<<", ">>", "{{", "}}"])
_WORD = re.compile(r"\w")


def normalise_target(raw: str) -> str | None:
    """The page title a link points to, as MediaWiki normalises it (first letter upper-cased,
    "_" as a space, no #anchor), or None when it is no namespace-0 article link."""
    title = raw.split("#", 1)[0]
    if "&" in title:
        title = html.unescape(title)
    if ":" in title:
        return None   # files, categories, other wikis: not an article of this wiki
    title = " ".join(title.replace("_", " ").split())
    if not title:
        return None   # [[#Section]]: a place on the same page
    return title[0].upper() + title[1:]


def mark_links(text: str) -> tuple[str, list[str]]:
    """`text` with each article link wrapped in numbered markers, and their targets in order,
    as written (normalise_target gives the page title)."""
    if "[[" not in text or MARKERS.search(text):
        return text, []
    targets: list[str] = []

    def mark(part: str) -> str:
        if "[[" not in part:
            return part
        pieces = _NS0_LINK.split(part)   # text, link, target, text, link, target, ..., text
        out = [pieces[0]]
        for i in range(1, len(pieces), 3):
            link, raw = pieces[i], pieces[i + 1]
            n = len(targets)
            if (":" in raw and ":" in raw.split("#", 1)[0]) or n >= MAX_LINKS:
                out.append(link)
            else:
                targets.append(raw)   # normalised later, for the links that reach the text
                out += (chr(OPEN + n), link, chr(CLOSE + n))
            out.append(pieces[i + 2])
        return "".join(out)

    return map_unprotected(text, mark), targets


def strip_markers(text: str) -> tuple[str, list[tuple[int, int, int]], bool]:
    """(text without markers, (start, end, link number) of each link whose two markers are
    left, whether a marker sat where wikiextractor's cleanup would have changed the text)."""
    parts = _MARKER_SPLIT.split(text)   # text, marker, text, marker, ..., text
    if len(parts) == 1:
        return text, [], False
    pieces = parts[0::2]
    places = list(itertools.accumulate(map(len, pieces[:-1])))   # in the text without markers
    codes = list(map(ord, parts[1::2]))
    opens = codes[0::2]
    if len(codes) % 2 == 0 and [c - (CLOSE - OPEN) for c in codes[1::2]] == opens:
        # every link kept both markers (the usual case): open, close, open, close, ...
        spans = [(a, b, c - OPEN) for a, b, c in zip(places[0::2], places[1::2], opens) if a < b]
    else:
        spans, started = [], {}
        for code, p in zip(codes, places):
            if code < CLOSE:
                started[code] = p
            else:
                start = started.pop(code - (CLOSE - OPEN), None)
                if start is not None and start < p:
                    spans.append((start, p, code - CLOSE))
    plain = "".join(pieces)
    return plain, spans, _hides_a_pattern(plain, places)


def _hides_a_pattern(text: str, places: list[int]) -> bool:
    """Is a marker removed at one of `places` (increasing) between two characters that
    wikiextractor's last cleanup would have joined into one of its patterns, or on a line with
    no word character (a line it drops)?"""
    padded = "\n" + text + "\n"   # padded[p:p + 2]: the characters before and after place p
    if not _JOINED.isdisjoint([padded[p:p + 2] for p in places]):
        return True
    ends = list(itertools.accumulate(map(len, text.split("\n")), lambda a, b: a + b + 1))
    for k in set(map(functools.partial(bisect.bisect_left, ends), places)):   # lines with a marker
        if not _WORD.search(text, ends[k - 1] + 1 if k else 0, ends[k]):
            return True
    return False


def realign(plain: str, reference: str, spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """`spans` of `plain` moved onto `reference` (the same text cleaned without markers), line
    by line; none when the two do not have the same lines."""
    if plain == reference:
        return spans
    a_lines, b_lines = plain.split("\n"), reference.split("\n")
    if len(a_lines) != len(b_lines):
        return []
    a_starts, b_starts = _line_starts(a_lines), _line_starts(b_lines)
    maps: dict[int, list[int]] = {}
    out = []
    for start, end, number in spans:
        k = bisect.bisect_right(a_starts, start) - 1
        if end > a_starts[k] + len(a_lines[k]):
            continue
        if k not in maps:
            maps[k] = _char_map(a_lines[k], b_lines[k])
        m = maps[k]
        s, e = m[start - a_starts[k]], m[end - a_starts[k]]
        if s < e:
            out.append((b_starts[k] + s, b_starts[k] + e, number))
    return out


def _line_starts(lines: list[str]) -> list[int]:
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


def _char_map(a: str, b: str) -> list[int]:
    """For each position 0..len(a) of `a`, the position in `b` of the same text, where `b` is
    `a` with a few characters inserted, deleted or changed (spaces, punctuation): a greedy walk
    that resynchronises on the next 4 equal characters."""
    if a == b:
        return list(range(len(a) + 1))
    m = [0] * (len(a) + 1)
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            m[i] = j
            i, j = i + 1, j + 1
            continue
        step = _resync(a, b, i, j)
        for _ in range(step[0]):
            m[i] = j
            i += 1
        j += step[1]
    while i < len(a):
        m[i] = len(b)
        i += 1
    m[len(a)] = len(b)
    return m


def _resync(a: str, b: str, i: int, j: int) -> tuple[int, int]:
    """How many characters of `a` and of `b` to pass at a mismatch: the fewest that make the
    next 4 characters (or the rest) equal; one of each (a changed character) when none does."""
    for total in range(1, 7):
        for da in range(total + 1):
            db = total - da
            if a[i + da:i + da + 4] == b[j + db:j + db + 4]:
                return da, db
    return 1, 1


def clean_with_links(extractor, text: str, marked: str, targets: list[str]) -> tuple[list[str], list[list]]:
    """wikiextractor's paragraphs of `text` (exactly as Extractor.clean_text gives them) and the
    links of `marked` (mark_links(text)) as [start, end, target] offsets into
    "\\n".join(non-blank paragraphs)."""
    if not targets:
        return extractor.clean_text(text, mark_headers=True, expand_templates=False, html_safe=False), []
    from wikiextractor.extract import clean, compact

    plain, spans, odd = strip_markers(clean(extractor, marked, expand_templates=False, html_safe=False))
    if odd:
        reference = clean(extractor, text, expand_templates=False, html_safe=False)
        spans = realign(plain, reference, spans)
        plain = reference
    paragraphs = compact(plain, mark_headers=True, extractor=extractor)
    return paragraphs, place_links(plain, paragraphs, spans, targets)


def place_links(plain: str, paragraphs: list[str], spans, targets: list[str]) -> list[list]:
    """Link spans of the cleaned text `plain` as offsets into the record text that compact's
    `paragraphs` make (compact keeps lines whole, or without their leading ":")."""
    ranges = []   # (start, end) of a paragraph in `plain`, its offset in the record text
    body = pos = 0
    for p in paragraphs:
        if not p.strip():
            continue
        if not p.startswith("## "):
            i = _find_line(plain, p, pos)
            if i >= 0:
                ranges.append((i, i + len(p), body))
                pos = i + len(p)
        body += len(p) + 1
    links, titles, r = [], {}, 0
    for start, end, number in sorted(spans):
        while r < len(ranges) and ranges[r][1] <= start:
            r += 1
        if r == len(ranges):
            break
        begin, stop, offset = ranges[r]
        if start < begin or end > stop:
            continue
        while start < end and plain[start].isspace():
            start += 1
        while end > start and plain[end - 1].isspace():
            end -= 1
        raw = targets[number]
        if raw not in titles:
            titles[raw] = normalise_target(raw)
        if start < end and titles[raw] is not None:
            links.append([offset + start - begin, offset + end - begin, titles[raw]])
    return links


def _find_line(text: str, line: str, pos: int) -> int:
    """Where a whole line of `text` at or after `pos` is `line` (after leading ":"), or -1."""
    i = text.find(line, pos)
    while i >= 0:
        j = i + len(line)
        if j == len(text) or text[j] == "\n":
            k = i
            while k > 0 and text[k - 1] == ":":
                k -= 1
            if k == 0 or text[k - 1] == "\n":
                return i
        i = text.find(line, i + 1)
    return -1
