"""How often `make pretrain` reads each source's text (its passes: trainer/start/passes.py counts
them the same way), said by its dry run and its closing lines, with the advice past 4 passes: the
tokens of text the budget wants and the --corpora (pipeline/corpora/named.py's table) or the
shorter budget that would give them.

    found = planned_passes(a, planned_reads(...), hdf5, parts, tokens)   # (Passes or None, how, parts)
    for line in passes_lines(a, *found): say(line)
    closing_lines(run_dir)    # ["   passes: the run read its text 37.2 times ..."] (hparams.json, train_log.jsonl)

The tokens a GPU run reads are the bench's pace over the budget (pretrain_plan.planned_reads); a
CPU's pace is only known once the trainer has timed its first steps, so a CPU dry run says so
(the run itself records its count, and warns of nothing: budgets there are small). The text:
once encoded, encode's count per source (its training_text record); before, estimated: the dump
(wikipedia_tokens: recipes/corpus_estimate.py), each web corpus from what ingest took of it, else --max-tokens, else its
size on the Hub (CorpusPart.estimated_tokens); each times its weight in the shards.
"""
from __future__ import annotations

import json
from pathlib import Path

from common.budget import budget_words, parse_budget
from common.make_vars import as_typed
from pipeline.core.manifest import read_manifest
from pipeline.core.registry import stage_dir
from pipeline.core.sources import WIKIPEDIA
from pipeline.corpora.locate import ingested
from pipeline.corpora.named import CORPORA
from pipeline.corpora.options import parse_per_source
from pipeline.encoding.hdf5_format import training_text
from recipes.corpus_estimate import estimate_corpus
from recipes.pretrain_commands import ROOT
from recipes.web_corpora import weights
from trainer.start.passes import MAX_PASSES, Passes, PhaseText


def wikipedia_tokens(a) -> int | None:
    """The dump's tokens estimated before the pipeline runs (recipes/corpus_estimate.py: a sample of
    its articles through extract's and format's cleaning, words counted as the vocab counts them):
    --dump, else the one a finished download stage holds; None before the latest is downloaded
    (the run does that first) or where no article could be read."""
    downloaded = (read_manifest(stage_dir(a.data_dir, a.lang, "download")) or {}).get("summary") or {}
    dump = a.dump or downloaded.get("dump")
    if dump is None or not Path(dump).is_file():
        return None
    estimate = estimate_corpus(Path(dump), a.lang, a.model_type)
    return round(estimate.tokens) if estimate is not None else None


def source_tokens(a, parts) -> tuple[dict[str, tuple[int, float]], str]:
    """({source: (its tokens in the training shards, its weight)}, where the numbers come from)
    before the encode; ({}, why) where Wikipedia's cannot be estimated."""
    w = weights(a)
    wiki = wikipedia_tokens(a)
    if wiki is None:
        return {}, "no local dump to estimate the text from (--dump)"
    out = {WIKIPEDIA: (round(wiki * w.get(WIKIPEDIA, 1.0)), w.get(WIKIPEDIA, 1.0))}
    took = ingested(a.data_dir, a.lang)
    limits = parse_per_source(a.max_tokens, "--max-tokens", int)
    for part in parts:
        cap = limits.get(part.source, limits.get(""))
        tokens = took.get(part.source, {}).get("estimated_tokens") or part.estimated_tokens(max_tokens=cap)
        weight = w.get(part.source, 1.0)
        out[part.source] = (round(tokens * weight), weight)
    return out, "estimated: Wikipedia from the dump (recipes/corpus_estimate.py), " + (
        "the web from what ingest took or its size on the Hub" if parts else "before the pipeline runs")


def planned_passes(a, read: list[float] | None, hdf5: list[Path], parts,
                   tokens_per_step: int | None = None) -> tuple[Passes | None, str, list]:
    """(the passes of a plan that reads `read` tokens in each phase, where its text comes from,
    `parts`); None and why where unknown (a CPU's pace: `read` None; a text that cannot be
    estimated)."""
    if read is None:
        return None, "counted by the trainer once it has timed its first steps (a CPU's pace is unknown before)", parts
    texts = [training_text(ROOT / h) for h in hdf5]
    if texts[0] is not None:
        texts = [t or texts[0] for t in texts]
        how = "encode's count"
        sources = texts[0].sources
        tokens = [t.tokens for t in texts]
    else:
        sources, how = source_tokens(a, parts)
        if not sources:
            return None, how, parts
        tokens = [sum(t for t, _w in sources.values())] * len(read)
    steps = round(sum(read) / tokens_per_step) if tokens_per_step else 0
    return Passes([PhaseText(r, t, 1, t) for r, t in zip(read, tokens)], steps, sources), how, parts


def passes_lines(a, passes: Passes | None, how: str, parts) -> list[str]:
    """The dry run's lines: the passes (per source), and past MAX_PASSES the warning."""
    if passes is None:
        return [f"passes: {how}"]
    lines = [f"{passes.line('the plan reads, at the bench pace,')} ({how})"]
    if passes.most > MAX_PASSES:
        lines.append(advice(a, passes, parts))
    return lines


def advice(a, passes: Passes, parts) -> str:
    """Past MAX_PASSES: the tokens this budget wants, the corpora that would give them, the budget
    that would read this text MAX_PASSES times."""
    given = {p.source: p for p in parts}
    caps = parse_per_source(a.max_tokens, "--max-tokens", int)
    sized = [f"more of {name} (its {p.language} part holds about {p.estimated_tokens():,} tokens; --max-tokens "
             f"{cap:,} takes {cap / p.estimated_tokens():.0%})" for name, p in given.items()
             if (cap := caps.get(name, caps.get(""))) and cap < p.estimated_tokens()]
    others = [name for name in CORPORA if name not in given]
    also = f" (or {', '.join(others[1:])})" if others[1:] else ""
    corpora = ", ".join(sized + ([as_typed("--corpora", others[0]) + also
                                  + " (a dry run with it says its tokens for the language)"] if others else []))
    short = parse_budget(a.budget) * MAX_PASSES / passes.most
    budget = (f"a budget of about {budget_words(round(short / 60) * 60)}" if short >= 60 else
              f"a budget of {short:.2g} s, no run on a GPU")
    return (f"warning: the plan reads its text {passes.most:,.0f} times; past about {MAX_PASSES} passes repeated "
            f"text teaches little (Muennighoff et al. 2023). This budget reads {passes.tokens_read:,} tokens: "
            f"{MAX_PASSES} passes want {passes.wanted_tokens():,} tokens of text, and the corpus has about "
            f"{passes.text_tokens or 0:,}. Add web text in the language: {corpora}; this text {MAX_PASSES} "
            f"times is {budget}")


def closing_lines(run_dir: Path) -> list[str]:
    """The closing line of a run: what it read (its last record), else what it planned; [] for a
    run that recorded neither."""
    try:
        hp = json.loads((Path(run_dir) / "hparams.json").read_text(encoding="utf-8"))
        records = [json.loads(x) for x in (Path(run_dir) / "train_log.jsonl").read_text(encoding="utf-8").split("\n")
                   if x.strip()]
    except (OSError, ValueError):
        return []
    read = next((r for r in reversed(records) if r.get("passes_read") is not None), None)
    key, record = ("passes_read", read) if read else ("passes", hp)
    if record.get(key) is None:
        return []
    sources = record.get(f"{key}_by_source") or {}
    each = "; " + ", ".join(f"{k} {v['passes']:.1f}" + (f" (weight {v['weight']:g})" if v["weight"] != 1 else "")
                            for k, v in sources.items()) if len(sources) > 1 else ""
    past = (f": past about {MAX_PASSES}, repeated text teaches little" if record.get(f"{key}_most", 0) > MAX_PASSES
            else "")
    return [f"   passes: the run {'read' if read else 'planned to read'} its text {record[key]:.1f} times"
            f"{each}{past}"]
