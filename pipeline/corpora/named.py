"""THE table of named web corpora: where each lives on the Hub, how its repository lays out a
language, which of its columns are kept per document, and its licence.

A corpus is in the table when its layout on the Hub is known (one folder a language, files of
one format in it) and its text is in one column; everything else about it is data here, so a
new corpus is one entry. What the entries say was checked against the Hub's listings and cards
(docs/pipeline.md "Web corpora" says which and when); a column listed in `kept` that a file lacks
is simply not kept.

Usage:
    corpus = named_corpus("fineweb-2")      # StageError naming the close names for a typo
    parse_corpus("fineweb-2@v2.0.1:srp_Latn")   # ("fineweb-2", "v2.0.1", "srp_Latn")
    corpus.files_of("hun_Latn")             # ["data/hun_Latn/train/*.parquet"]
    corpus.language_of("data/hun_Latn")     # "hun_Latn" ("" for data/hun_Latn_removed)
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from pipeline.core.errors import StageError


@dataclass(frozen=True)
class NamedCorpus:
    name: str                  # --corpus NAME, and the source's name in ingested/ file names
    title: str
    repo: str                  # the Hub dataset
    languages_dir: str         # the folder holding one folder a language ("" for the top)
    folder: str                # regex of a language's folder; group "code" is the language
    files: tuple[str, ...]     # globs inside a language's folder (the corpus's training text)
    code_style: str            # "iso639-3_Script" (hun_Latn) or "bcp47" (hu, sr_Latn)
    fmt: str                   # parquet | jsonl (pipeline/text/corpus_files.py)
    text_column: str
    kept: tuple[str, ...]      # the corpus's own columns kept per document (metadata.py)
    score_column: str | None   # what --min-language-score filters on (None: no such column)
    license: tuple[str, ...]   # the Hub's license identifiers (dataset card YAML)
    license_text: str          # what a user must know to share what is made from it
    url: str
    gated: bool = False        # the Hub asks users to accept its terms first
    tokens_per_byte: float = 0.3   # before anything is fetched: tokens per byte of its files

    def language_of(self, folder: str) -> str:
        """The language code of a folder of the repository ("" when it is not a language's)."""
        prefix = f"{self.languages_dir}/" if self.languages_dir else ""
        if not folder.startswith(prefix):
            return ""
        m = re.fullmatch(self.folder, folder[len(prefix):])
        return m.group("code") if m else ""

    def files_of(self, folder_name: str) -> list[str]:
        """The globs of one language folder's training files, relative to the repository."""
        prefix = f"{self.languages_dir}/" if self.languages_dir else ""
        return [f"{prefix}{folder_name}/{g}" for g in self.files]


ISO3_SCRIPT = r"(?P<code>[a-z]{3}_[A-Z][a-z]{3})"
CORPORA: dict[str, NamedCorpus] = {c.name: c for c in (
    # data/{lang}_{Script}/train/*.parquet (and test/, the corpus's own held-out documents, left
    # out); data/{lang}_{Script}_removed/ holds what its filters dropped and is never read.
    # Parquet of ~4.85 GB a file in the big languages: about 0.3 tokens a byte (a prior, replaced
    # by the measured ratio once a file is read: slicing.py).
    NamedCorpus(
        "fineweb-2", "FineWeb-2", "HuggingFaceFW/fineweb-2", "data", ISO3_SCRIPT, ("train/*.parquet",),
        "iso639-3_Script", "parquet", "text", ("id", "url", "dump", "date", "language_score"),
        "language_score", ("odc-by",),
        "ODC-By 1.0 (Open Data Commons Attribution License); the text is from Common Crawl, "
        "under its terms of use", "https://huggingface.co/datasets/HuggingFaceFW/fineweb-2"),
    # {lang}_{Script}/train-NNNNN-of-NNNNN.parquet; the largest languages are cut into
    # {lang}_{Script}_N folders, read in order as one. Its metadata's column names were not seen
    # here: id and url are kept where the files have them.
    NamedCorpus(
        "hplt-2", "HPLT 2.0 (cleaned)", "HPLT/HPLT2.0_cleaned", "", ISO3_SCRIPT + r"(?:_\d+)?",
        ("*.parquet",), "iso639-3_Script", "parquet", "text", ("id", "url"), None,
        ("cc0-1.0",),
        "CC0 1.0 for the packaging; HPLT claims no rights in the text, which is from the Internet "
        "Archive and Common Crawl (see the dataset card's terms)",
        "https://huggingface.co/datasets/HPLT/HPLT2.0_cleaned", tokens_per_byte=0.25),
    # data/{lang}/{lang}_clean_NNNN.jsonl.gz (the noisy files beside them are left out); codes
    # are BCP-47 (hu, zh, sr_Latn).
    NamedCorpus(
        "madlad-400", "MADLAD-400 (clean)", "allenai/MADLAD-400", "data",
        r"(?P<code>[a-z]{2,3}(?:_[A-Za-z]{4})?(?:_[A-Z]{2})?)", ("*_clean_*.jsonl.gz",), "bcp47",
        "jsonl", "text", (), None, ("odc-by",),
        "ODC-By 1.0; the text is from Common Crawl, under its terms of use",
        "https://huggingface.co/datasets/allenai/MADLAD-400", tokens_per_byte=0.6),
    # {lang}/{lang}_part_NNNNN.parquet; gated: accept its terms on the Hub and log in.
    NamedCorpus(
        "culturax", "CulturaX", "uonlp/CulturaX", "", r"(?P<code>[a-z]{2,3})", ("*.parquet",),
        "bcp47", "parquet", "text", ("url", "timestamp", "source"), None, ("odc-by", "cc0-1.0"),
        "the terms of mC4 (ODC-By 1.0) and OSCAR (CC0 1.0), which it was made from; the text is "
        "from Common Crawl, under its terms of use",
        "https://huggingface.co/datasets/uonlp/CulturaX", gated=True),
)}


def parse_corpus(spec: str) -> tuple[str, str | None, str]:
    """(name, revision or None, the corpus's language code or "") of `NAME[@REVISION][:CODE]`."""
    head, _, code = spec.strip().partition(":")
    name, _, revision = head.partition("@")
    return name.strip().lower(), revision.strip() or None, code.strip()


def named_corpus(name: str) -> NamedCorpus:
    """The table's entry of `name`; StageError naming the close names (or all) otherwise."""
    corpus = CORPORA.get(name.strip().lower())
    if corpus is None:
        close = difflib.get_close_matches(name.strip().lower(), CORPORA, n=2, cutoff=0.5)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise StageError(f"--corpus {name}: not a named corpus ({hint}named: {', '.join(CORPORA)}); "
                         "any Hub dataset is read with --source NAME=hf://datasets/ORG/REPO/GLOB")
    return corpus
