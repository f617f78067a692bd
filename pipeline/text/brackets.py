"""Do a line's brackets and quotes balance? One definition for the filter's line rule and for
the quality measure (pipeline/text/quality.py); and the repair that format makes.

A line is unbalanced when some bracket kind opens more than it closes (or the reverse), when
it holds an odd number of a quote that opens and closes with the same character ("), or when
its „ and “/” (German and Slavic „…“, „…”) or “ and ” (English) do not pair up. A ")" that
closes nothing and ends a list label at the start of a word ("1)", "а)", "iv)": the way
Ukrainian, Russian and many other Wikipedias number items inside running text) is a label, not
a bracket.

repair_brackets (format, on a whole paragraph): a bracket kind that opens and closes a different
number of times loses the ones that match nothing: `Séc 811 km), Áo (815 km)` becomes
`Séc 811 km, Áo (815 km)`. Text broken at its source (or by a template that took its other
half away) would otherwise glue sentences together or leave a stray bracket in every sentence
after it. Quotes that open and close with the same character are left alone (which of them is
the stray cannot be known), and kinds whose counts agree are never touched (Danish »…«).
"""
from __future__ import annotations

import re

BRACKET_PAIRS = ("()", "[]", "{}", "（）", "［］", "「」", "『』", "【】", "«»", "〔〕", "《》", "〈〉")
SAME_QUOTES = ('"',)
# A list label ending in ")": up to 3 digits, one letter, or a small Roman numeral, at the start
# of a word (after a space, an opening bracket or quote, or the line's start).
_LABEL_BEFORE = re.compile(r"(?:^|[\s(«\"„“])(?:\d{1,3}|[^\W\d_]|[ivxIVX]{2,4})$")
_PARENS = re.compile(r"[()]")
# Every character the balance depends on.
_MARKS = re.compile("[" + re.escape("".join(BRACKET_PAIRS) + "".join(SAME_QUOTES) + "„“”") + "]")


def _without_labels(line: str) -> str:
    """`line` without the ")" of list labels that close no "("."""
    depth, labels = 0, []
    for m in _PARENS.finditer(line):
        if m.group() == "(":
            depth += 1
        elif depth:
            depth -= 1
        elif _LABEL_BEFORE.search(line, max(0, m.start() - 5), m.start()):
            labels.append(m.start())
    for pos in reversed(labels):
        line = line[:pos] + line[pos + 1:]
    return line


def unbalanced(line: str) -> bool:
    """True when some bracket or quote kind of `line` does not close what it opens."""
    marks = "".join(_MARKS.findall(line))   # a few characters: the counting below is cheap
    if not marks:
        return False
    if ")" in marks and _stray_closer(marks):
        marks = "".join(_MARKS.findall(_without_labels(line)))
    for opener, closer in BRACKET_PAIRS:
        if marks.count(opener) != marks.count(closer):
            return True
    for q in SAME_QUOTES:
        if marks.count(q) % 2:
            return True
    if "„" in marks:  # German/Slavic „…“ (or „…”): the closer is “ or ”
        return marks.count("„") != marks.count("“") + marks.count("”")
    return marks.count("“") != marks.count("”")


def _stray_closer(marks: str) -> bool:
    """Does some ")" close nothing (a list label, or a bracket opened nowhere)?"""
    depth = 0
    for c in marks:
        if c == "(":
            depth += 1
        elif c == ")":
            if not depth:
                return True
            depth -= 1
    return False


# The directional bracket kinds (opener -> closer): the ones repair_brackets may fix.
_REPAIRABLE = dict(BRACKET_PAIRS)
_REPAIRABLE_CHAR = re.compile("[" + re.escape("".join(_REPAIRABLE) + "".join(_REPAIRABLE.values())) + "]")


def repair_brackets(text: str) -> str:
    """`text` without the brackets of a kind that match nothing, where that kind's counts differ
    (a list label's ")" is no bracket and stays)."""
    found = _REPAIRABLE_CHAR.findall(text)
    if not found:
        return text
    marks = "".join(found)
    stray: list[int] = []
    for opener, closer in _REPAIRABLE.items():
        if marks.count(opener) == marks.count(closer):
            continue
        stack: list[int] = []
        for m in re.finditer(re.escape(opener) + "|" + re.escape(closer), text):
            if m.group() == opener:
                stack.append(m.start())
            elif stack:
                stack.pop()
            elif not (closer == ")" and _LABEL_BEFORE.search(text, max(0, m.start() - 5), m.start())):
                stray.append(m.start())
        stray += stack
    if not stray:
        return text
    for pos in sorted(stray, reverse=True):
        text = text[:pos] + text[pos + 1:]
    return " ".join(text.split())
