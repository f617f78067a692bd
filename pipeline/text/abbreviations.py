"""Abbreviations learned from the corpus itself, the way Punkt does (Kiss & Strunk 2006).

A hand-made list cannot cover 300 Wikipedias, and every language abbreviates differently
(Greek "σελ.", "βλ.", Ukrainian "див.", Vietnamese "TP."). Punkt's observation: an abbreviation
is a short word that (almost) always carries its final period. For every word type seen with a
final period, the log-likelihood ratio of "this word and the period go together" (Dunning's
test against the corpus-wide rate of periods) is scaled down by its length, up by its inner
periods ("e.g"), and down steeply for each time the word is seen without a period; a type
scoring at least 0.3 is an abbreviation. These are the scores of NLTK's PunktTrainer
(`_reclassify_abbrev_types`), computed here over word counts in one regex pass, so a sample of
several MB takes well under a second. One more test keeps out names that end many sentences
("Едо.", "Монро."), which a small sample scores like abbreviations: an abbreviation is often
followed by a lower-case word or a number ("див. також", "ст. 5"), or at least is itself
written in lower case ("вул. Хрещатик"). In a caseless script (Arabic, Devanagari, Georgian)
that test says little, so only words of up to three letters are learned there ("م.", "डॉ.").

What it covers: scripts that end abbreviations with "." and put spaces between words (Latin,
Cyrillic, Greek, Armenian, Georgian, Indic scripts when they use "." besides the danda, ...).
Scripts without spaces (CJK, Thai) have no such abbreviations and unambiguous sentence stops:
nothing is learned there, and nothing is needed.

Usage:
    learn_abbreviations(sample_text)     # frozenset({"див", "р", "ст", "т.зв", ...})
"""
from __future__ import annotations

import math
import re
from collections import Counter

ABBREV_SCORE = 0.3          # Punkt's threshold
MIN_COUNT_WITH_PERIOD = 3   # one or two occurrences say nothing
MAX_LETTERS = 8             # longer words are not abbreviated in running text
MIN_LOWER_AFTER = 0.15      # share of occurrences followed by a lower-case word or a number
MAX_CASELESS_LETTERS = 3    # in a caseless script what follows says little: only short ones
_OPENING = "([{«\"„“‘'¿¡"
_WORD = re.compile(r"[^\W\d_](?:[^\W_]|[.\-'’](?=[^\W_]))*")


def _dunning_log_likelihood(count_a: int, count_b: int, count_ab: int, n: int) -> float:
    """-2 log λ of Punkt: word a followed by a period (b), against the corpus rate of periods."""
    p1 = count_b / n
    p2 = 0.99
    null = count_ab * math.log(p1) + (count_a - count_ab) * math.log(1.0 - p1)
    alt = count_ab * math.log(p2) + (count_a - count_ab) * math.log(1.0 - p2)
    return -2.0 * (null - alt)


def learn_abbreviations(text: str) -> frozenset[str]:
    """The abbreviations of `text` (lower case, without the final period)."""
    words = text.split()
    tokens = Counter(words)  # C speed: every token, as written
    n = len(words)
    with_period: Counter = Counter()
    lower_after: Counter = Counter()
    capitalised: Counter = Counter()
    for token, nxt in [(a, b) for a, b in zip(words, words[1:] + [""]) if a[-1] == "."]:
        word = token[:-1].lstrip(_OPENING)
        if not word or not _WORD.fullmatch(word) or (len(word) > 1 and word.isupper()):
            continue  # not a word, or an acronym ("ООН."), which ends sentences like any word
        key = word.lower()
        with_period[key] += 1
        if nxt and (nxt[0].islower() or nxt[0].isdigit()):
            lower_after[key] += 1
        if word[0].isupper():
            capitalised[key] += 1
    periods = sum(with_period.values())
    if not n or not periods or periods >= n:
        return frozenset()
    found = set()
    for word, count_with in with_period.items():
        if count_with < MIN_COUNT_WITH_PERIOD:
            continue
        inner_periods = word.count(".")
        letters = len(word) - inner_periods
        if letters > MAX_LETTERS:
            continue
        count_without = sum(tokens.get(form, 0) for form in {word, word.capitalize(), word + ",",
                                                               word.capitalize() + ","})
        ll = _dunning_log_likelihood(count_with + count_without, periods, count_with, n)
        score = ll * math.exp(-letters) * (inner_periods + 1) * math.pow(letters, -count_without)
        if score < ABBREV_SCORE or count_with <= count_without:
            continue
        if letters > MAX_CASELESS_LETTERS and word[0].upper() == word[0].lower():
            continue  # Arabic, Devanagari, Georgian: "م.", "डॉ.", "წ." are short
        lower = lower_after[word] / count_with
        if lower >= MIN_LOWER_AFTER or (capitalised[word] < count_with / 2 and lower >= MIN_LOWER_AFTER / 3):
            found.add(word)
    return frozenset(found)
