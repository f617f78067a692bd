"""The stage registry: the one list of stages that the CLI, its help, `pipeline run` and the
data directory's layout read.

Each entry names the stage's command, the module that defines it (`pipeline.stages.NAME`
holds a click `command` and the Python function behind it), the folder it writes under
DATA_DIR/LANG/ (None where the name depends on options, as encode's hdf5_... folders do), the
stages whose finished output it reads, and the optional outputs it also reads when they are
there (split reads dedup's output instead of format's once a dedup has finished). The order
is the order `pipeline run` follows: every stage after what it reads, so
shard runs before vocab, whose quality report is measured on the test shards; the probe, which
only evaluates models, comes last, after the data the trainer needs.

Several languages (`pipeline --lang hr,sr,bs run`) keep one folder each, DATA_DIR/LANG/, as
one language does; what they share, the joint vocab (`joint-vocab`), lives in
DATA_DIR/multi/{the codes, sorted, joined by '+'}/, e.g. DATA_DIR/multi/bs+hr+sr/vocab/.

Usage:
    stage_dir(data_dir, "hu", "split")      # DATA_DIR/hu/sentences
    [s.name for s in pipeline_stages()]     # download ... encode, probe: the order of `pipeline run`
    validate_langs("hr,sr,bs")              # ("hr", "sr", "bs"); StageError for a bad or repeated code
    joint_dir(data_dir, ["hr", "sr", "bs"]) # DATA_DIR/multi/bs+hr+sr
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import StageError


@dataclass(frozen=True)
class Stage:
    name: str                       # the command: `pipeline NAME`
    output: str | None              # folder under DATA_DIR/LANG/, None: named by its options
    upstream: tuple[str, ...] = ()  # stages whose finished output it reads
    also_reads: tuple[str, ...] = ()  # outputs it uses when present (never required)
    prefers: tuple[str, ...] = ()   # read instead of upstream when finished (split: deduped/)
    in_run: bool = True             # one of the stages `pipeline run` chains
    summary: str = ""               # one line for `pipeline --help`
    several_langs: bool = False     # takes several languages (--lang hr,sr,bs); others one

    @property
    def module(self) -> str:
        return f"pipeline.stages.{self.name.replace('-', '_')}"


STAGES: tuple[Stage, ...] = (
    Stage("download", "download", summary="the dump of a Wikipedia, checksum-verified (or --dump PATH)"),
    Stage("extract", "extracted", ("download",), summary="article text with wikiextractor"),
    Stage("format", "formatted", ("extract",), summary="one clean paragraph per line"),
    Stage("ingest", "ingested", summary="other corpora (text, JSONL, Parquet) as formatted text"),
    Stage("dedup", "deduped", also_reads=("format", "ingest"),
          summary="every source together, exact and near-duplicate copies removed"),
    Stage("split", "sentences", ("format",), prefers=("dedup",), summary="one sentence per line"),
    Stage("filter", "filtered", ("split",), summary="documents that are running text of the language"),
    Stage("shard", "sharded", ("filter",), summary="balanced training and test shards, sources weighted"),
    Stage("vocab", "vocab", ("filter",), also_reads=("shard",),
          summary="WordPiece vocab.txt and its quality report"),
    Stage("encode", None, ("shard", "vocab"), summary="static-masked instances in NVIDIA's HDF5"),
    Stage("probe", "probe", ("extract", "split", "shard"),
          summary="a tagging task from the dump's own links (train/dev/test.conll)"),
    Stage("joint-vocab", None, ("filter",), also_reads=("shard", "vocab"), in_run=False,
          several_langs=True, summary="one vocab for several languages (--lang hr,sr,bs), "
                                      "their shares smoothed by --sampling-alpha"),
    Stage("export", "export", ("shard",), also_reads=("extract", "format", "ingest", "dedup", "split",
                                                      "filter", "encode"), in_run=False,
          summary="the corpus as Parquet for other tools: articles, or token rows (--format tokens)"),
    Stage("inspect", None, ("encode",), in_run=False, summary="decoded instances of an HDF5 file"),
    Stage("run", None, in_run=False, several_langs=True,
          summary="every stage in order, then the report (make corpus); --lang hr,sr,bs: each, "
                  "one joint vocab"),
    Stage("report", None, in_run=False,
          also_reads=("extract", "format", "split", "filter", "shard", "vocab", "encode"),
          summary="report.html: what each stage kept and lost, with pictures"),
    Stage("clean", None, in_run=False, summary="remove the folders you no longer need (--keep ...)"),
)
BY_NAME = {s.name: s for s in STAGES}

# Wikipedia language codes: "hu", "simple", "zh-min-nan", "be-x-old", "zh_yue" (dbname form).
_LANG_RE = re.compile(r"^[a-z][a-z0-9]{1,11}(?:[-_][a-z0-9]{1,11}){0,3}$")


def pipeline_stages() -> list[Stage]:
    """The stages `pipeline run` chains, in order."""
    return [s for s in STAGES if s.in_run]


def validate_lang(lang: str) -> str:
    """Return `lang` if it is a Wikipedia language code, else raise StageError (never a path)."""
    if not isinstance(lang, str) or not _LANG_RE.match(lang):
        raise StageError(
            f"--lang {lang!r} is not a Wikipedia language code: use the code of the wiki, "
            "e.g. hu, uk, vi, zh, simple, zh-min-nan"
        )
    return lang


def validate_langs(value: str) -> tuple[str, ...]:
    """The codes of `--lang hr,sr,bs` in the order given; StageError for a code that is not one
    (validate_lang) and for a code given twice."""
    langs = tuple(c.strip() for c in str(value).split(","))
    if len(langs) == 1:
        return (validate_lang(langs[0]),)
    for code in langs:
        if not code:
            raise StageError(f"--lang {value}: an empty code: give codes separated by commas, "
                             "e.g. --lang hr,sr,bs")
        try:
            validate_lang(code)
        except StageError as exc:
            raise StageError(f"--lang {value}: {code!r} is {str(exc).split(' is ', 1)[-1]}") from None
    twice = sorted({c for c in langs if langs.count(c) > 1})
    if twice:
        raise StageError(f"--lang {value}: {', '.join(twice)} given twice: give each language once")
    return langs


# DATA_DIR/multi/: what several languages share (the joint vocab); not a Wikipedia's code.
MULTI_DIR = "multi"


def joint_name(langs) -> str:
    """The folder name of a set of languages: the codes sorted, joined by '+' (bs+hr+sr), so
    the same set given in any order names the same folder."""
    return "+".join(sorted(validate_lang(c) for c in langs))


def joint_dir(data_dir: str | os.PathLike, langs) -> Path:
    """DATA_DIR/multi/{joint_name}: the folder of what `langs` share."""
    return Path(data_dir) / MULTI_DIR / joint_name(langs)


def lang_dir(data_dir: str | os.PathLike, lang: str) -> Path:
    return Path(data_dir) / validate_lang(lang)


def stage_dir(data_dir: str | os.PathLike, lang: str, stage: str) -> Path:
    """DATA_DIR/LANG/<the stage's folder>."""
    folder = BY_NAME[stage].output
    if folder is None:
        raise ValueError(f"stage {stage!r} has no fixed output folder")
    return lang_dir(data_dir, lang) / folder
