"""`make pretrain LANG=hu CORPORA=fineweb-2` (recipes/pretrain.py --corpora): Wikipedia plus the
named web corpora of the language (pipeline/corpora/named.py's table), each with a weight.

    --corpora fineweb-2                        the language's part of FineWeb-2, weight 1
    --corpora fineweb-2=0.5,wikipedia=2        its documents sampled down to half, Wikipedia's twice
    --corpora fineweb-2:srp_Latn --corpus-root /mirror/fineweb-2 --max-tokens 2e9

Before any stage (`check`): every corpus is located for --lang (an unknown language, a corpus
without it, offline and not cached, a bad weight: one line). Then, between format and split,
`pipeline ingest --corpus NAME ... [--corpus-root DIR] [--max-tokens N]` and `pipeline dedup`
(Wikipedia's copy of a text wins; split reads deduped/ once it exists), and `pipeline shard
--weight NAME=W` for each weight but 1: the shard stage holds out documents of every source.

    corpora = parse_corpora(["fineweb-2=0.5,wikipedia=2"])   # [("fineweb-2", 0.5), ("wikipedia", 2.0)]
    parts = check(args)                   # the located CorpusParts ([] without --corpora)
    web_steps(args)                       # [(the ingest command, "pipeline ingest"), (dedup's, ...)]
    text_steps(args)                      # the text stages in order, ingest and dedup after format
    shard_weights(args)                   # ["--weight", "fineweb-2=0.5", "--weight", "wikipedia=2"]
"""
from __future__ import annotations

from pipeline.core.errors import StageError
from pipeline.core.sources import WIKIPEDIA
from pipeline.corpora.named import named_corpus, parse_corpus
from pipeline.corpora.options import Limits, parse_per_source
from recipes.pretrain_commands import TEXT_STAGES, forced, pipeline, text_stage


def add_options(p) -> None:
    """--corpora, --corpus-root and --max-tokens of recipes/pretrain.py's parser."""
    p.add_argument("--corpora", action="append", metavar="NAME[=WEIGHT],...",
                   help="web corpora of the language beside Wikipedia (fineweb-2, hplt-2, madlad-400, culturax), "
                        "each with its shard weight; wikipedia=W weighs the dump's text (docs/pipeline.md)")
    p.add_argument("--corpus-root", action="append", metavar="[NAME=]DIR",
                   help="a local copy laid out as the corpus's Hub repository, read instead of the Hub")
    p.add_argument("--max-tokens", action="append", metavar="[NAME=]N",
                   help="take the first N estimated tokens of a web corpus (pipeline ingest --max-tokens)")


def parse_corpora(values) -> list[tuple[str, float]]:
    """[(NAME[@REV][:CODE] or "wikipedia", weight)] of --corpora NAME[=WEIGHT],... (repeatable);
    StageError in one line for a corpus the table does not name or a weight that is not >= 0."""
    out = []
    for item in (x.strip() for value in values or () for x in str(value).split(",")):
        if not item:
            continue
        spec, eq, weight = item.rpartition("=") if "=" in item else (item, "", "1")
        try:
            w = float(weight)
        except ValueError:
            w = -1.0
        if not w >= 0 or w == float("inf"):
            raise StageError(f"--corpora {item}: the weight after '=' is a number >= 0 (2 reads the source "
                             "twice as often, 0.5 half of it), e.g. --corpora fineweb-2=0.5")
        spec = spec.strip()
        if spec.lower() != WIKIPEDIA:
            named_corpus(parse_corpus(spec)[0])   # one line with the close names for a typo
        if any(source_name(s) == source_name(spec) for s, _w in out):
            raise StageError(f"--corpora: {source_name(spec)} is given twice: give each corpus once")
        out.append((spec, w))
    return out


def source_name(spec: str) -> str:
    """The source's name in the pipeline's files (and for `shard --weight`): the corpus's name."""
    return WIKIPEDIA if spec.strip().lower() == WIKIPEDIA else parse_corpus(spec)[0]


def web_specs(a) -> list[str]:
    return [spec for spec, _w in parse_corpora(a.corpora) if source_name(spec) != WIKIPEDIA]


def check(a) -> list:
    """Before any stage: --corpora parsed, each corpus located for --lang (and offline, its slice
    found in the cache); the CorpusParts. StageError, one line, otherwise."""
    given, roots_given, caps = (getattr(a, k, None) for k in ("corpora", "corpus_root", "max_tokens"))
    corpora = parse_corpora(given)
    specs = [spec for spec, _w in corpora if source_name(spec) != WIKIPEDIA]
    if not specs:
        if roots_given or caps:
            raise StageError("--corpus-root and --max-tokens are for the web corpora of --corpora (e.g. "
                             "--corpora fineweb-2 --max-tokens 2e9)")
        if corpora:
            raise StageError("--corpora names no web corpus (wikipedia is the dump's text): name one, e.g. "
                             "--corpora fineweb-2")
        return []
    from pipeline.corpora import plan  # huggingface_hub and langcodes, only for a run with web corpora

    roots = {}
    for value in roots_given or ():
        name, sep, path = str(value).partition("=")
        roots[name.strip().lower() if sep else ""] = path if sep else str(value)
    limits = Limits(parse_per_source(caps, "--max-tokens", int), {})
    return plan.web_parts(a.lang, specs, {}, roots, limits=limits)


def web_steps(a) -> list[tuple[list, str]]:
    """The commands between format and split: ingest of the web corpora, then dedup."""
    specs = web_specs(a)
    if not specs:
        return []
    ingest = pipeline(a, "ingest", *[x for s in specs for x in ("--corpus", s)],
                      *[x for r in a.corpus_root or () for x in ("--corpus-root", r)],
                      *[x for n in a.max_tokens or () for x in ("--max-tokens", n)], *forced(a))
    return [(ingest, "pipeline ingest"), (pipeline(a, "dedup", *forced(a)), "pipeline dedup")]


def text_steps(a) -> list[tuple[list, str]]:
    """(command, step) of the text stages in order; with web corpora, ingest and dedup after format."""
    steps = []
    for stage in TEXT_STAGES:
        steps.append((text_stage(a, stage), f"pipeline {stage}"))
        steps += web_steps(a) if stage == "format" else []
    return steps


def weights(a) -> dict[str, float]:
    """{source: its --corpora weight} (1 where none was given)."""
    return {source_name(spec): w for spec, w in parse_corpora(a.corpora)}


def shard_weights(a) -> list[str]:
    return [x for name, w in weights(a).items() if w != 1.0 for x in ("--weight", f"{name}={w:g}")]
