"""The probe's sentences: mentions of linked articles, tagged from an article's own links
(WikiANN's idea), token by token in IOB2 with one entity type, LINK.

From an extract record (text + links, pipeline/text/links.py) to tagged sentences:
1. The article's paragraphs are cleaned exactly as the format stage cleans them
   (pipeline/text/cleaning.py), and each link's label is found again in its cleaned paragraph
   (the same text after the same light cleaning, nearest to where it was); a label the cleaning
   changed beyond that is lost (counted).
2. The caller splits the cleaned paragraphs with the split stage's own splitter and learned
   abbreviations (pipeline/text/splitting.py), so that a sentence is byte for byte a line of
   the shards; each sentence is found in its paragraph.
3. Tokens are the sentence split at whitespace (a script written without spaces gives long
   tokens: whatever the split gives). A token is in a mention when it overlaps a link's label;
   the tokens of one label are B-LINK, I-LINK, ...
4. Propagation: Wikipedia links an entity at its first mention only, so the later, unlinked
   mentions of a linked surface form in the same article are tagged too, and so are the
   mentions of the article's own title (without a trailing "(...)"): whole tokens (compared
   without the punctuation around them, case kept), longest form first. Forms without a letter
   (years, numbers) are not propagated.
5. A sentence is kept when it has a mention, at most MAX_TOKENS tokens, no token that extends
   a linked one-word form and was left untagged ("Budapesten" beside a linked "Budapest": an
   inflected mention the propagation cannot see), and no private-use character. The caller
   decides the rest (is it in the shards, which split).

Usage:
    article = prepare_article(record)                    # cleaned paragraphs with their links
    per_paragraph = split_lines("\\n".join(article.paragraphs), lang, kind, learned=learned)
    sentences, dropped = tag_article(article, per_paragraph)
    conll_block(sentence)                                 # "word\\tB-LINK\\n...\\n" for the file
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from .cleaning import clean_fragment, clean_paragraphs

TAGS = ("O", "B-LINK", "I-LINK")
MAX_TOKENS = 128
MIN_VARIANT_CHARS = 4    # a linked one-word form shorter than this is never taken as a stem
_TOKEN = re.compile(r"\S+")
_TRAILING_BRACKET = re.compile(r"\s*\([^()]*\)\s*$")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_LETTER = re.compile(r"[^\W\d_]")
_NEAR = 8   # occurrences of a label looked at, the one nearest its old place wins


@dataclass
class Article:
    """An article's cleaned paragraphs, the link spans in each, and its title."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    spans: list[list[tuple[int, int]]] = field(default_factory=list)
    lost_links: int = 0


@dataclass
class Sentence:
    text: str
    tokens: list[str]
    tags: list[str]
    linked: int       # mentions from the article's links
    propagated: int   # mentions added by propagation

    @property
    def mentions(self) -> int:
        return self.linked + self.propagated


def prepare_article(record: dict) -> Article:
    """The record's paragraphs as the format stage cleans them, with their link spans."""
    text = record["text"]
    raw = text.split("\n")
    starts, pos = [], 0
    for line in raw:
        starts.append(pos)
        pos += len(line) + 1
    by_line: dict[int, list[tuple[int, int]]] = {}
    k = 0
    for start, end, _target in sorted(record.get("links") or ()):
        while k + 1 < len(starts) and starts[k + 1] <= start:
            k += 1
        if end <= starts[k] + len(raw[k]):
            by_line.setdefault(k, []).append((start - starts[k], end - starts[k]))
    article = Article(record.get("title", ""))
    for i, cleaned in clean_paragraphs(raw):
        spans = locate_links(raw[i], cleaned, by_line.get(i, []))
        article.lost_links += len(by_line.get(i, [])) - len(spans)
        article.paragraphs.append(cleaned)
        article.spans.append(spans)
    return article


def locate_links(raw: str, cleaned: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of `raw` (in order) found again in `cleaned`: each label, lightly cleaned, at
    its occurrence nearest to where it was (relative to the paragraph's length), after the
    previous one."""
    out = []
    pos = 0
    scale = len(cleaned) / max(1, len(raw))
    for start, end in spans:
        needle = clean_fragment(raw[start:end])
        if not needle:
            continue
        expected = start * scale
        best = None
        i = cleaned.find(needle, pos)
        for _ in range(_NEAR):
            if i < 0:
                break
            if best is None or abs(i - expected) < abs(best - expected):
                best = i
            if i > expected:
                break
            i = cleaned.find(needle, i + 1)
        if best is not None:
            out.append((best, best + len(needle)))
            pos = best + len(needle)
    return out


def locate_sentences(paragraph: str, sentences: list[str]) -> list[int]:
    """Where each sentence starts in its paragraph (-1: not found; the splitters cut stripped
    pieces of the paragraph, so this is the exception)."""
    out, pos = [], 0
    for s in sentences:
        i = paragraph.find(s, pos)
        out.append(i)
        if i >= 0:
            pos = i + len(s)
    return out


def tag_tokens(sentence: str, spans: list[tuple[int, int]]) -> tuple[list[str], list[str], int]:
    """Tokens of `sentence`, their IOB2 tags from the mention `spans` (sorted, not overlapping,
    offsets into the sentence), and how many mentions got a token."""
    tokens, tags = [], []
    k = mentions = 0
    last = -1
    for m in _TOKEN.finditer(sentence):
        while k < len(spans) and spans[k][1] <= m.start():
            k += 1
        tokens.append(m.group())
        if k < len(spans) and spans[k][0] < m.end():
            tags.append("I-LINK" if last == k else "B-LINK")
            mentions += last != k
            last = k
        else:
            tags.append("O")
    return tokens, tags, mentions


@lru_cache(maxsize=65536)
def _category(c: str) -> str:
    return unicodedata.category(c)


def token_key(token: str) -> str:
    """A token without the punctuation and symbols around it ("«Київ»," -> "Київ")."""
    i, j = 0, len(token)
    while i < j and _category(token[i])[0] in "PS":
        i += 1
    while j > i and _category(token[j - 1])[0] in "PS":
        j -= 1
    return token[i:j]


class Forms:
    """The surface forms of an article's mentions, for propagation: token-key tuples by first key."""

    def __init__(self):
        self.by_first: dict[str, list[tuple[str, ...]]] = {}
        self.words: set[str] = set()   # one-word forms, for the inflected-variant check

    def add(self, keys) -> None:
        keys = tuple(k for k in keys if k)
        if not keys or not any(_LETTER.search(k) for k in keys):
            return
        forms = self.by_first.setdefault(keys[0], [])
        if keys not in forms:
            forms.append(keys)
            forms.sort(key=len, reverse=True)
        if len(keys) == 1 and len(keys[0]) >= MIN_VARIANT_CHARS:
            self.words.add(keys[0])

    def propagate(self, keys: list[str], tags: list[str]) -> int:
        """Tag the untagged whole-token occurrences of the forms; returns how many."""
        added, i, n = 0, 0, len(keys)
        while i < n:
            forms = self.by_first.get(keys[i]) if tags[i] == "O" else None
            for form in forms or ():
                size = len(form)
                if tuple(keys[i:i + size]) == form and all(t == "O" for t in tags[i:i + size]):
                    tags[i:i + size] = ["B-LINK"] + ["I-LINK"] * (size - 1)
                    added += 1
                    i += size - 1
                    break
            i += 1
        return added

    def has_untagged_variant(self, keys: list[str], tags: list[str]) -> bool:
        """Is an untagged token a linked one-word form with something glued on ("Budapesten")?"""
        if not self.words:
            return False
        for key, tag in zip(keys, tags):
            if tag == "O" and len(key) > MIN_VARIANT_CHARS:
                if any(key[:n] in self.words for n in range(MIN_VARIANT_CHARS, len(key))):
                    return True
        return False


def mention_keys(keys: list[str], tags: list[str]):
    """The key tuple of each mention (a B-LINK and the I-LINK tokens after it)."""
    group: list[str] = []
    for key, tag in zip(keys, tags):
        if tag == "I-LINK" and group:
            group.append(key)
            continue
        if group:
            yield tuple(group)
        group = [key] if tag == "B-LINK" else []
    if group:
        yield tuple(group)


def title_form(title: str) -> list[str]:
    """The token keys of an article's title without a trailing "(...)" ("Merkúr (bolygó)" -> Merkúr)."""
    return [token_key(t) for t in _TRAILING_BRACKET.sub("", title).split()]


def tag_article(article: Article, per_paragraph: list[list[str]]) -> tuple[list[Sentence], Counter]:
    """The article's sentences that the probe can use, tagged; and why the others were dropped.
    `per_paragraph`: the sentences of each of article.paragraphs, as the split stage cuts them."""
    dropped: Counter = Counter()
    pending = []   # (text, keys, tokens, tags, linked)
    forms = Forms()
    forms.add(title_form(article.title))
    for paragraph, spans, sentences in zip(article.paragraphs, article.spans, per_paragraph):
        for sentence, start in zip(sentences, locate_sentences(paragraph, sentences)):
            if start < 0:
                dropped["not_found"] += 1
                continue
            end = start + len(sentence)
            inside = [(max(s, start) - start, min(e, end) - start) for s, e in spans if s < end and e > start]
            tokens, tags, linked = tag_tokens(sentence, inside)
            keys = [token_key(t) for t in tokens]
            for form in mention_keys(keys, tags):   # the linked forms, as whole tokens
                forms.add(form)
            pending.append((sentence, keys, tokens, tags, linked))
    out = []
    for sentence, keys, tokens, tags, linked in pending:
        propagated = forms.propagate(keys, tags)
        if linked + propagated == 0:
            dropped["no_mention"] += 1
        elif len(tokens) > MAX_TOKENS:
            dropped["too_long"] += 1
        elif forms.has_untagged_variant(keys, tags):
            dropped["unlinked_variant"] += 1
        elif _PRIVATE_USE.search(sentence):
            dropped["private_use"] += 1
        else:
            out.append(Sentence(sentence, tokens, tags, linked, propagated))
    return out, dropped


def line_hash(line: str) -> int:
    """A 64-bit hash of a sentence line (how the shards' lines are looked up)."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest(), "little")


def seeded_hash(text: str, seed: int, salt: str = "") -> int:
    """A 64-bit hash of `text` under `seed` (and a salt per use): the probe's choices."""
    key = (salt + str(seed)).encode("utf-8")[:64]
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), key=key, digest_size=8).digest(), "little")


def conll_block(tokens: list[str], tags: list[str]) -> str:
    """One sentence in CoNLL: a `word<TAB>tag` line per token, then a blank line."""
    return "".join(f"{t}\t{g}\n" for t, g in zip(tokens, tags)) + "\n"
