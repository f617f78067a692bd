"""Sentence splitting of formatted text: quntoken for Hungarian, the rule-based splitter
(pipeline/text/sentence_rules.py) for every other language. A paragraph (input line) always
ends a sentence; quntoken is only asked where sentences end, and a file whose quntoken output
cannot be aligned with its input is split with the rules instead (never losing text).

Usage:
    kind = resolve_splitter("hu", "auto")                    # "quntoken"
    learned = learn_abbreviations(sample_text)               # pipeline/text/abbreviations.py
    text, n_docs, n_sentences = split_text(formatted_text, "hu", kind, learned=learned)
    split_lines(formatted_text, "uk", "rules", learned=learned)   # [[sentence, ...] per line]
"""
from __future__ import annotations

import logging
from functools import lru_cache

from pipeline.core.errors import StageError

from .documents import format_documents
from .quntoken import QuntokenMisaligned, split_paragraphs
from .sentence_rules import SentenceSplitter

SPLITTERS = ("auto", "quntoken", "rules")
QUNTOKEN_LANGS = {"hu"}
log = logging.getLogger("pipeline")


def resolve_splitter(lang: str, splitter: str) -> str:
    """The splitter `auto` means for `lang`: quntoken for Hungarian, the rules otherwise."""
    if splitter not in SPLITTERS:
        raise StageError(f"--splitter must be one of {', '.join(SPLITTERS)} (got {splitter!r})")
    if splitter == "auto":
        return "quntoken" if lang in QUNTOKEN_LANGS else "rules"
    return splitter


def split_lines(text: str, lang: str, splitter: str, name: str = "",
                learned: frozenset[str] = frozenset()) -> list[list[str]]:
    """The sentences of each line of `text` (a list per line, empty for a blank one), as
    split_text cuts them."""
    if splitter == "quntoken":
        try:
            return split_paragraphs(text)
        except QuntokenMisaligned as exc:  # never lose text: this file gets the rules instead
            log.warning("split: %s; %s is split with the rule-based splitter", exc, name or "a file")
    rules = _rules(lang, frozenset(learned))
    return [rules.split(line) for line in text.split("\n")]


@lru_cache(maxsize=8)
def _rules(lang: str, learned: frozenset[str]):
    return SentenceSplitter.for_language(lang, learned)


def split_text(text: str, lang: str, splitter: str, name: str = "",
               learned: frozenset[str] = frozenset()) -> tuple[str, int, int]:
    """Split formatted text (paragraph per line, blank line between documents); `learned`:
    abbreviations learned from the corpus, for the rules.

    Returns the output text, its number of documents and of sentences.
    """
    per_line = split_lines(text, lang, splitter, name, learned)
    docs: list[list[str]] = []
    doc: list[str] = []
    for line, sentences in zip(text.split("\n"), per_line):
        if not line.strip():
            if doc:
                docs.append(doc)
                doc = []
            continue
        doc.extend(sentences)
    if doc:
        docs.append(doc)
    return format_documents(docs), len(docs), sum(len(d) for d in docs)
