"""A language's part of a web corpus as the rest of wiki2bert asks for it: its files in order,
where they come from (repository, commit, the corpus's own language code), its licence, and
its size in bytes and estimated tokens, before anything is fetched.

`--corpus NAME` finds the part of the table's corpus for the run's --lang (languages.py),
`--corpus NAME:CODE` names the corpus's code (`fineweb-2:srp_Latn`, the Latin half of Serbian),
`--corpus NAME@REVISION` pins a revision of its repository (a tag, a branch, a commit);
`--source NAME=hf://datasets/ORG/REPO[@REV]/GLOB` is any Hub dataset, its licence read from its
card. Either reads a local copy laid out as the repository instead of the Hub (`corpus_root`).

Usage:
    part = locate("hu", "fineweb-2")                   # CorpusPart; StageError in one line
    part.files, part.bytes, part.estimated_tokens(max_tokens=10**9)
    part.provenance()                                  # for manifests and cards
    part = locate_url("web", "hf://datasets/ORG/REPO/data/*.parquet", corpus_root=None)
    ingested("data", "hu")      # what ingest wrote of each web source: provenance + its counts
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import DatasetCard

from pipeline.core.errors import StageError
from pipeline.core.manifest import read_manifest
from pipeline.core.registry import stage_dir
from pipeline.text.corpus_files import detect_format

from .hub import RemoteFile, Repo, open_repo
from .languages import corpus_tag, match_language, nearest_languages, wiki_tag
from .named import CORPORA, NamedCorpus, named_corpus, parse_corpus
from .options import parse_hf_url
from .slicing import by_size

UNKNOWN_LICENSE = ("unknown",)
DEFAULT_TOKENS_PER_BYTE = 0.3   # a Parquet or compressed JSON corpus, before one file is read


@dataclass
class CorpusPart:
    source: str                 # its name in ingested/ file names (the corpus's, or --source NAME)
    title: str
    repo: Repo
    language: str               # the corpus's code (hun_Latn); "" for an hf:// source
    files: list[RemoteFile]     # the part's training files, in the corpus's order
    fmt: str
    text_column: str
    kept: tuple[str, ...]
    score_column: str | None
    license: tuple[str, ...]
    license_text: str
    url: str
    tokens_per_byte: float = DEFAULT_TOKENS_PER_BYTE

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)

    def slice_bytes(self, max_bytes: float | None = None) -> int:
        return sum(f.size for f in (by_size(self.files, max_bytes) if max_bytes else self.files))

    def expected_bytes(self, max_tokens: int | None = None, max_bytes: float | None = None) -> int:
        """The bytes of the files the slice will take (with --max-tokens, from the tokens a byte)."""
        size = self.slice_bytes(max_bytes)
        return min(size, int(max_tokens / self.tokens_per_byte)) if max_tokens else size

    def estimated_tokens(self, max_tokens: int | None = None, max_bytes: float | None = None) -> int:
        """Tokens of the slice before it is read: its bytes times the corpus's tokens a byte."""
        tokens = int(self.slice_bytes(max_bytes) * self.tokens_per_byte)
        return min(tokens, max_tokens) if max_tokens else tokens

    def provenance(self) -> dict:
        return {"title": self.title, "repo": self.repo.repo, "revision": self.repo.commit,
                "from": self.repo.where, "language": self.language, "files": len(self.files),
                "bytes": self.bytes, "license": list(self.license), "license_text": self.license_text,
                "url": self.url}


def locate(lang: str, corpus: str, corpus_root: str | Path | None = None,
           revision: str | None = None) -> CorpusPart:
    """The part of named corpus `corpus` (NAME[@REVISION][:CODE]) for Wikipedia code `lang`."""
    name, pinned, code = parse_corpus(corpus)
    entry = named_corpus(name)
    tag = wiki_tag(lang)   # an unknown --lang is one line before the Hub is asked anything
    repo = open_repo(entry.repo, pinned or revision, Path(corpus_root) if corpus_root else None)
    folders = _language_folders(entry, repo)
    if not folders:
        raise StageError(f"{entry.title} ({repo.repo}, {repo.where}) holds no language folders under "
                         f"'{entry.languages_dir or '/'}': is --corpus-root the repository's copy?")
    code = code or match_language(lang, folders, entry.code_style)
    if code not in folders:
        what = f"--corpus {corpus}" if code else f"--lang {lang} ({tag})"
        near = nearest_languages(corpus_tag(code) if code else tag, folders, entry.code_style)
        raise StageError(f"{entry.title} has no part for {what}; its nearest languages: {', '.join(near)}: "
                         f"name one with --corpus {entry.name}:CODE, or choose another corpus "
                         f"({', '.join(c for c in CORPORA if c != entry.name)})")
    files = [f for folder in folders[code] for f in repo.matching(entry.files_of(folder))]
    if not files:
        raise StageError(f"{entry.title}: {code} has no files matching {', '.join(entry.files)} "
                         f"({repo.repo}, {repo.where}): check --corpus-root or the revision")
    return CorpusPart(entry.name, entry.title, repo, code, files, entry.fmt, entry.text_column,
                      entry.kept, entry.score_column, entry.license, entry.license_text, entry.url,
                      entry.tokens_per_byte)


def locate_url(name: str, spec: str, corpus_root: str | Path | None = None, text_field: str = "text",
               fmt: str | None = None) -> CorpusPart:
    """The files of an hf://datasets/ORG/REPO[@REV]/GLOB source, named `name`."""
    repo_id, revision, glob = parse_hf_url(spec)
    repo = open_repo(repo_id, revision, Path(corpus_root) if corpus_root else None)
    files = repo.matching([glob])
    if not files:
        raise StageError(f"--source {name}={spec}: no file of {repo_id} ({repo.where}) matches {glob}: "
                         "check the pattern (`*` stays inside a folder, `**` crosses folders)")
    fmts = {detect_format(Path(f.path), fmt) for f in files}
    if len(fmts) > 1:
        raise StageError(f"--source {name}={spec} matches files of several formats ({', '.join(sorted(fmts))}): "
                         "narrow the pattern to one")
    url = f"https://huggingface.co/datasets/{repo_id}"
    return CorpusPart(name, repo_id, repo, "", files, fmts.pop(), text_field, (), None,
                      _card_license(repo), f"see the dataset card: {url}", url)


def _language_folders(entry: NamedCorpus, repo: Repo) -> dict[str, list[str]]:
    """{the corpus's language code: its folders in order} (a language may span numbered folders)."""
    out: dict[str, list[str]] = {}
    for folder in repo.folders(entry.languages_dir):
        code = entry.language_of(f"{entry.languages_dir}/{folder}" if entry.languages_dir else folder)
        if code:
            out.setdefault(code, []).append(folder)
    natural = lambda s: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]   # noqa: E731
    return {code: sorted(fs, key=natural) for code, fs in out.items()}


def _card_license(repo: Repo) -> tuple[str, ...]:
    """The `license:` of the repository's README.md card, where it has one."""
    if "README.md" not in repo.sizes:
        return UNKNOWN_LICENSE
    try:
        card = DatasetCard.load(repo.local_path(RemoteFile("README.md", repo.sizes["README.md"])))
    except (StageError, OSError, ValueError):
        return UNKNOWN_LICENSE
    value = card.data.license
    return tuple(value) if isinstance(value, list) else (value,) if value else UNKNOWN_LICENSE


def ingested(data_dir, lang: str) -> dict[str, dict]:
    """{web source: its provenance and licence, and what ingest took of it (documents,
    estimated_tokens, input_bytes, files, ...)} from a finished ingest ({} where there is none)."""
    manifest = read_manifest(stage_dir(data_dir, lang, "ingest")) or {}
    counts = (manifest.get("summary") or {}).get("per_source") or {}
    return {name: {**record, **counts.get(name, {})} for name, record in (manifest.get("corpora") or {}).items()}
