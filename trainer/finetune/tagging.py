"""Token-tagging files: CoNLL-2003 style columns and CoNLL-U, and the IOB tag rules.

    sentences = read_tagging("train.conllu")                  # UPOS tags (fmt from the suffix)
    sentences = read_tagging("train.txt", column=3)           # CoNLL-2003: NER is column 3
    sentences = read_conllu("train.conllu", column="xpos")
    sentence.words, sentence.tags, sentence.line               # line: its first token's line
    if is_iob_tagging(sentences):                              # NER: score entities
        tags = to_iob2(sentence.tags)                          # IOB1 (CoNLL-2003) -> IOB2
    check_iob_tags(sentences, path)                            # a stray 'PER' among B-/I- tags
    require_entity_tags(sentences, path)                       # --task ner: every tag O or B-/I-..

Import these from `trainer.finetune.readers`, which re-exports them.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from common.numbers import plural
from trainer.finetune.textfiles import FinetuneDataError, PathLike, read_text, text_lines

CONLLU_COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
_IOB2 = re.compile(r"^[BI]-.+$")
_IOB_ANY = re.compile(r"^[BIES]-.+$")     # IOB1/IOB2/IOBES prefixes


@dataclass
class TaggedSentence:
    words: list[str]
    tags: list[str]
    line: int          # 1-based line number of its first token in the file
    token_lines: list[int] | None = field(default=None, compare=False)   # each token's, from a file

    def line_of(self, token: int) -> int:
        """The file line of token `token` (0-based); the sentence's first line if unknown."""
        return self.token_lines[token] if self.token_lines else self.line


class _Sentences:
    """Collects tokens into sentences; a sentence ends at a blank line or -DOCSTART-."""

    def __init__(self) -> None:
        self.done: list[TaggedSentence] = []
        self.words: list[str] = []
        self.tags: list[str] = []
        self.lines: list[int] = []

    def add(self, word: str, tag: str, line: int) -> None:
        self.words.append(word)
        self.tags.append(tag)
        self.lines.append(line)

    def end(self) -> None:
        if self.words:
            self.done.append(TaggedSentence(self.words, self.tags, self.lines[0], self.lines))
            self.words, self.tags, self.lines = [], [], []


def _column_index(column: int, ncols: int) -> int | None:
    index = column + ncols if column < 0 else column
    return index if 0 <= index < ncols else None


def read_conll(path: PathLike, word_column: int = 0, tag_column: int = -1) -> list[TaggedSentence]:
    """CoNLL-2003 style column files: one token per line, blank lines between sentences.

    Columns are split on tabs if the first token line has a tab (then a word may hold a
    space), else on any whitespace. Every token line must have as many columns as the first
    one: a short or long line is a broken file, not something to guess around."""
    out = _Sentences()
    ncols = first_line = 0
    sep: str | None = None
    word_i = tag_i = 0
    for number, line in enumerate(text_lines(read_text(path)), start=1):
        if not line.strip() or line.startswith("-DOCSTART-"):
            out.end()
            continue
        if not ncols:
            sep = "\t" if "\t" in line else None
        cells = [c.strip() for c in line.rstrip().split("\t")] if sep else line.split()
        if not ncols:
            ncols, first_line = len(cells), number
            w, t = _column_index(word_column, ncols), _column_index(tag_column, ncols)
            if ncols < 2:
                raise FinetuneDataError.at(
                    path, f"only 1 column ({cells[0]!r}); a CoNLL file has the word first and "
                          "the tag in a later column, separated by spaces or tabs", number)
            if w is None or t is None:
                which = "word" if w is None else "tag"
                raise FinetuneDataError.at(
                    path, f"{plural(ncols, 'column')}, so there is no {which} column "
                          f"{word_column if w is None else tag_column}; choose a column from "
                          f"0 to {ncols - 1}", number)
            if w == t:
                raise FinetuneDataError.at(
                    path, f"the word and tag columns are the same (column {w}); choose a "
                          "different tag column", number)
            word_i, tag_i = w, t
        elif len(cells) != ncols:
            raise FinetuneDataError.at(
                path, f"{plural(len(cells), 'column')} where the first token line (line {first_line}) "
                      f"has {ncols}; every token line needs the same columns "
                      f"({'tab' if sep else 'whitespace'}-separated)", number)
        if not cells[word_i] or not cells[tag_i]:
            raise FinetuneDataError.at(path, "an empty word or tag; fill it in or remove the "
                                             "line", number)
        out.add(cells[word_i], cells[tag_i], number)
    out.end()
    return out.done


def _conllu_column(path: PathLike, column: str | int) -> int:
    if isinstance(column, str) and column.lower() in CONLLU_COLUMNS:
        return CONLLU_COLUMNS.index(column.lower())
    if isinstance(column, int) and -10 <= column < 10:
        return column % 10
    raise FinetuneDataError.at(
        path, f"no CoNLL-U column {column!r}; use a name ({', '.join(CONLLU_COLUMNS)}) or an "
              "index from 0 to 9")


def read_conllu(path: PathLike, column: str | int = "upos") -> list[TaggedSentence]:
    """CoNLL-U (Universal Dependencies): the FORM column with the tags of `column` (a name or a
    0-based index). Multiword token ranges ("3-4") and empty nodes ("5.1") are skipped: the
    tags belong to the syntactic words, which are the lines with a plain number."""
    index = _conllu_column(path, column)
    out = _Sentences()
    for number, line in enumerate(text_lines(read_text(path)), start=1):
        if not line.strip():
            out.end()
            continue
        if line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != 10:
            raise FinetuneDataError.at(
                path, f"{plural(len(cells), 'tab-separated column')}; CoNLL-U token lines have 10 "
                      "(ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC) - is it a "
                      "CoNLL column file (read it as fmt conll)?", number)
        if "-" in cells[0] or "." in cells[0]:
            continue
        out.add(cells[1], cells[index], number)
    out.end()
    if out.done and all(t == "_" for s in out.done for t in s.tags):
        # UD leaves XPOS (and others) as '_' in many treebanks: training on it learns nothing
        raise FinetuneDataError.at(
            path, f"column {CONLLU_COLUMNS[index]!r} is '_' (unset) for every token; choose "
                  "another column, e.g. upos")
    return out.done


def read_tagging(path: PathLike, column: str | int | None = None,
                 fmt: str | None = None) -> list[TaggedSentence]:
    """Tagged sentences from a CoNLL-U file (fmt "conllu", or the suffix .conllu) or a CoNLL
    column file (anything else). `column`: for CoNLL-U a column name or index (default upos),
    for CoNLL the 0-based tag column (default the last); a string of digits counts as a
    number, since it usually comes from the command line."""
    fmt = (fmt or ("conllu" if Path(path).suffix.lower() == ".conllu" else "conll")).lower()
    if isinstance(column, str) and re.fullmatch(r"-?\d+", column.strip()):
        column = int(column)
    if fmt == "conllu":
        sentences = read_conllu(path, "upos" if column is None else column)
    elif fmt == "conll":
        if isinstance(column, str):
            raise FinetuneDataError.at(
                path, f"column {column!r} is a name, but a CoNLL column file has no header; "
                      "give the tag column as a number (0-based), or use fmt conllu for "
                      "CoNLL-U")
        sentences = read_conll(path, tag_column=-1 if column is None else column)
    else:
        raise FinetuneDataError.at(path, f"unknown tagging format {fmt!r}; use conll or conllu")
    if not sentences:
        raise FinetuneDataError.at(
            path, "no sentences; a tagging file has one token per line and a blank line "
                  "between sentences")
    return sentences


def to_iob2(tags: list[str]) -> list[str]:
    """IOB1 -> IOB2: an I-X that starts an entity (first, after O, or after another type)
    becomes B-X. IOB2 tags come back unchanged, as do O and tags without a prefix."""
    out = []
    prev_type = None        # entity type of the previous tag, None after O / start
    for tag in tags:
        if _IOB_ANY.match(tag):
            kind = tag[2:]
            if tag[0] == "I" and prev_type != kind:
                tag = "B-" + kind
            prev_type = kind
        else:
            prev_type = None
        out.append(tag)
    return out


def is_iob_tagging(sentences: Iterable[TaggedSentence]) -> bool:
    """True when every tag is O, B-X or I-X and at least one is B-/I- (entities to score);
    POS tags (NOUN, VERB...) give False."""
    entities = False
    for sentence in sentences:
        for tag in sentence.tags:
            if tag == "O":
                continue
            if not _IOB2.match(tag):
                return False
            entities = True
    return entities


def check_iob_tags(sentences: Iterable[TaggedSentence], path: PathLike) -> None:
    """When the file looks IOB (most of its tags other than O have a B-/I-/E-/S- prefix),
    raise FinetuneDataError at the first tag that is neither O nor prefixed: a typo such as
    'PER' or 'B_LOC' would otherwise become an entity type of its own."""
    sentences = list(sentences)
    others = [t for s in sentences for t in s.tags if t != "O"]
    prefixed = sum(1 for t in others if _IOB_ANY.match(t))
    if not others or prefixed * 2 <= len(others):
        return
    for sentence in sentences:
        for i, tag in enumerate(sentence.tags):
            if tag != "O" and not _IOB_ANY.match(tag):
                raise FinetuneDataError.at(
                    path, f"tag {tag!r} (token {i + 1}, {sentence.words[i]!r}, of the sentence "
                          "starting here) is neither O nor B-/I-/E-/S-TYPE, though the other "
                          "tags are; fix the tag", sentence.line)


def require_entity_tags(sentences: Iterable[TaggedSentence], path: PathLike) -> None:
    """The tag scheme of the ner task, checked before any training: every tag is O or
    B-/I-/E-/S-TYPE (what the entity metric scores). Raises FinetuneDataError at the first
    other tag, naming its own line; where most tags are not prefixed, says the file does not look
    like entity tags at all (a POS file, or the wrong --tag_column)."""
    sentences = list(sentences)
    others = [t for s in sentences for t in s.tags if t != "O"]
    bad = [t for t in others if not _IOB_ANY.match(t)]
    if not bad:
        return
    for sentence in sentences:
        for i, tag in enumerate(sentence.tags):
            if tag != "O" and not _IOB_ANY.match(tag):
                if len(bad) * 2 > len(others):
                    hint = (f"{len(bad):,} of the file's {len(others):,} tags other than O are not "
                            "entity tags: is it a POS file (--task pos), or is --tag_column the "
                            "column of the entity tags?")
                else:
                    hint = "fix the tag"
                raise FinetuneDataError.at(
                    path, f"tag {tag!r} (token {sentence.words[i]!r}) is neither O nor "
                          f"B-/I-/E-/S-TYPE, the tags --task ner scores as entities; {hint}",
                    sentence.line_of(i))
