"""`pipeline run`: every stage in order, each resuming or skipping what is already done.

Usage:
    pipeline --lang hu run                              # download the latest huwiki dump
    pipeline --lang hu run --dump data/sample/huwiki-sample.xml.bz2
    pipeline --lang uk run --dump ukwiki.xml.xz --vocab-size 16000 --encode 128/20
    pipeline --lang hu run --dump huwiki.xml.bz2 --source web=cc100-hu.txt.xz --weight web=0.5
    pipeline --lang hu run --source web=cc100-hu.txt.xz     # no dump: a corpus without Wikipedia
    pipeline --lang hu run --dump huwiki.xml.bz2 --source web='hf://datasets/HuggingFaceFW/fineweb-2/data/hun_Latn/train/*.parquet'

With --source, ingest and dedup run too (Wikipedia and every source deduplicated together,
pipeline/stages/dedup.py) and split reads the deduplicated mix; without --dump nothing is
downloaded and the stages that need the dump (download, extract, format, probe) are skipped.

Ends by writing DATA_DIR/LANG/report.html (`pipeline report`) and printing its path.

Several languages, one model:

    pipeline --lang hr,sr,bs run --dump hr=hrwiki.xml.bz2 --dump sr=srwiki.xml.bz2 --dump bs=bswiki.xml.bz2
    pipeline --lang uk,vi run --vocab-size 16000 --own-vocab-size 8000 --sampling-alpha 0.7

Each language runs its own stages in its own folder (DATA_DIR/LANG/, its own splitter, filter
settings and report) up to its own vocab, the baseline the joint vocab is compared with (at
--own-vocab-size, default --vocab-size); then `joint-vocab` trains one vocab for all of them
(--vocab-size, --sampling-alpha) in DATA_DIR/multi/{codes}/vocab, every language's encode uses
it (folders ending in _joint-{codes}), and probe and report run per language. Either every
language has a --dump LANG=PATH or none has (each is downloaded). An error names its language.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import click

from common.make_vars import as_typed
from pipeline.core.errors import StageError
from pipeline.core.manifest import read_manifest
from pipeline.core.os_errors import reported
from pipeline.core.registry import joint_dir, pipeline_stages, stage_dir
from pipeline.core.sources import parse_pairs, parse_weights
from pipeline.corpora.options import is_hub
from pipeline.encoding.hdf5_format import DUPE_FACTOR
from pipeline.text.wikipedias import LIST_FILE, close_codes, is_wikipedia, looks_like_a_name
from vocab.kinds import MODEL_TYPES

log = logging.getLogger("pipeline")


def parse_encode_setting(ctx, param, values):
    """`--encode 128/20` -> (128, 20); several may be given."""
    settings = []
    for value in values:
        try:
            seq, pred = (int(x) for x in value.split("/"))
        except ValueError:
            raise click.BadParameter(f"{value!r} is not SEQ/PRED, e.g. 128/20 or 512/80") from None
        settings.append((seq, pred))
    return tuple(settings)


RUN_HELP = (f"Run {', '.join(s.name for s in pipeline_stages())} in order, then write "
            "report.html.\n\n"
            "Finished stages are skipped in seconds; an interrupted one resumes where it stopped.")


@click.command("run", help=RUN_HELP)
@click.option("--dump", "dumps", type=click.Path(dir_okay=False), multiple=True, metavar="PATH|LANG=PATH",
              help="A local dump file instead of downloading one; with several languages "
                   "LANG=PATH, once for each.")
@click.option("--date", default="latest", show_default=True,
              help="Dump date to download (YYYYMMDD or 'latest').")
@click.option("--allow-unknown-lang", is_flag=True,
              help="Take --lang as it is (download's check against the dump's <siteinfo> and the "
                   "list of Wikipedias is skipped): for a wiki that is not on the list.")
@click.option("--vocab-size", type=click.IntRange(min=200), default=32000, show_default=True,
              help="Lines of vocab.txt, special tokens included (the vocab stage).")
@click.option("--model-type", type=click.Choice(MODEL_TYPES), default=None,
              help="The vocab stage's --model-type (one language) [default: the vocab stage's].")
@click.option("--own-vocab-size", type=click.IntRange(min=200), default=None,
              help="Several languages: the size of each language's own vocab, the baseline the "
                   "joint vocab is compared with [default: --vocab-size].")
@click.option("--sampling-alpha", type=click.FloatRange(0, 1), default=None,
              help="Several languages: a language's share of the joint vocab's sample ∝ (its "
                   "share of the text)^ALPHA; 1 proportional, 0 uniform [default: 0.3].")
@click.option("--num-shards", type=click.IntRange(min=1), default=None,
              help="Training shards [default: the shard stage's].")
@click.option("--encode", "encode_settings", multiple=True, default=("128/20", "512/80"),
              show_default=True, callback=parse_encode_setting,
              help="SEQ/PRED of an HDF5 set to write; repeat for several.")
@click.option("--dupe-factor", type=click.IntRange(min=1), default=DUPE_FACTOR, show_default=True,
              help="Passes over the documents, each with new masks and pairs (encode).")
@click.option("--no-encode", is_flag=True, help="Skip the encode stage (stop after the vocab).")
@click.option("--source", "sources", multiple=True, metavar="NAME=PATH",
              help="Another corpus to mix in (ingest; repeatable); with no --dump, the only text.")
@click.option("--weight", "weights", multiple=True, metavar="NAME=W",
              help="A source's weight in the training shards (2: twice, 0.5: half; 'wikipedia' "
                   "for the dump) [default: 1].")
@click.option("--format", "formats", multiple=True, metavar="FORMAT|NAME=FORMAT",
              help="Format of the --source files: text, jsonl or parquet [default: from the name].")
@click.option("--text-field", default="text", show_default=True,
              help="JSONL field or Parquet column of the text (ingest).")
@click.option("--doc-per-line", is_flag=True, help="Text sources hold one document per line (ingest).")
@click.option("--force", is_flag=True, help="Redo every stage from scratch, even finished ones.")
@click.pass_context
def command(ctx, dumps, date, allow_unknown_lang, vocab_size, model_type, own_vocab_size, sampling_alpha,
            num_shards, encode_settings, dupe_factor, no_encode, sources, weights, formats,
            text_field, doc_per_line, force):
    if len(ctx.obj.languages) > 1:
        if model_type:
            raise click.UsageError("--model-type is for one language's run: several languages share "
                                   "one joint WordPiece vocab (joint-vocab)")
        given = [n for n, v in (("--source", sources), ("--weight", weights), ("--format", formats),
                                ("--text-field", text_field != "text"), ("--doc-per-line", doc_per_line)) if v]
        if given:
            raise click.UsageError(f"{given[0]} with several languages: a run of several takes "
                                   "each one's Wikipedia; mix other corpora into one language's run "
                                   "(pipeline --lang xx run --source ...), then `joint-vocab` and "
                                   "encode take its text as it is")
        run_languages(ctx, parse_dumps(dumps, ctx.obj.languages), date=date,
                      allow_unknown_lang=allow_unknown_lang, vocab_size=vocab_size,
                      own_vocab_size=own_vocab_size or vocab_size,
                      sampling_alpha=0.3 if sampling_alpha is None else sampling_alpha,
                      num_shards=num_shards, encode_settings=encode_settings,
                      dupe_factor=dupe_factor, no_encode=no_encode, force=force)
        return
    for name, value in (("--own-vocab-size", own_vocab_size), ("--sampling-alpha", sampling_alpha)):
        if value is not None:
            raise click.UsageError(f"{name} is for several languages (pipeline --lang hr,sr,bs run)")
    dump = _one_dump(dumps, ctx.obj.lang)
    group = ctx.parent.command
    started = time.time()
    named = parse_pairs(sources, "--source")
    hub = {n: v for n, v in named.items() if is_hub(v)}
    if hub:   # a Hub source offline and not cached, gated or missing: one line before any stage
        from pipeline.corpora.plan import web_parts  # huggingface_hub loads for Hub sources only
        web_parts(ctx.obj.lang, [], hub, {}, text_field, {})
    unknown = sorted(set(parse_weights(weights)) - set(named) - {"wikipedia"})
    if unknown:
        raise click.UsageError(f"--weight {', '.join(unknown)}: not a --source of this run")
    wiki = dump is not None or not named   # no dump but sources: a corpus without Wikipedia
    skipped = set() if wiki else {"download", "extract", "format", "probe"}
    if not named:
        skipped |= {"ingest", "dedup"}
    data = stage_dir(ctx.obj.data_dir, ctx.obj.lang, "dedup" if named else "format")
    # Options of `run` that belong to one stage; the order of the stages is the registry's.
    stage_options = {
        "download": {"dump": dump, "date": date, "allow_unknown_lang": allow_unknown_lang},
        "ingest": {"sources": sources, "formats": formats, "text_field": text_field,
                   "doc_per_line": doc_per_line},
        "dedup": {"wikipedia": wiki},
        "split": {"input_": data},   # the mix, or formatted/ even where an older dedup ran
        "shard": {"weights": weights, **({"num_shards": num_shards} if num_shards else {})},
        "vocab": {"vocab_size": vocab_size, **({"model_type": model_type} if model_type else {})},
    }

    def invoke(name, **kwargs):
        cmd = group.get_command(ctx, name)
        if cmd is None:
            raise click.UsageError(f"stage '{name}' is not available in this installation")
        with reported(name):   # a full disk in a stage's own steps: one line naming the stage
            ctx.invoke(cmd, force=force, **kwargs)

    for stage in pipeline_stages():
        if stage.name in skipped:
            continue
        if stage.name != "encode":
            invoke(stage.name, **stage_options.get(stage.name, {}))
        elif not no_encode:
            for seq, pred in encode_settings:
                invoke("encode", max_seq=seq, max_pred=pred, dupe_factor=dupe_factor)
    with reported("report"):
        ctx.invoke(group.get_command(ctx, "report"))
    log.info("run: all stages done for %s in %.1f s (data in %s)", ctx.obj.lang,
             time.time() - started, ctx.obj.data_dir / ctx.obj.lang)


def _one_dump(dumps: tuple[str, ...], lang: str) -> str | None:
    """One language's --dump: the path (the last one given, as before), `LANG=PATH` accepted."""
    if not dumps:
        return None
    dump = dumps[-1]
    code, sep, path = dump.partition("=")
    return path if sep and code == lang and path and not Path(dump).exists() else dump


def parse_dumps(values: tuple[str, ...], langs: tuple[str, ...]) -> dict[str, str]:
    """--dump LANG=PATH, once for each language or for none (then each is downloaded)."""
    dumps: dict[str, str] = {}
    for value in values:
        code, sep, path = value.partition("=")
        if not sep or not path:
            raise click.UsageError(f"--dump {value}: with several languages give each dump as "
                                   f"LANG=PATH (--dump {langs[0]}=PATH --dump {langs[1]}=PATH ...)")
        if code not in langs:
            raise click.UsageError(f"--dump {value}: {code} is not one of --lang {','.join(langs)}")
        if code in dumps:
            raise click.UsageError(f"--dump: {code} has two dumps: give one --dump {code}=PATH")
        dumps[code] = path
    missing = [c for c in langs if c not in dumps]
    if dumps and missing:
        raise click.UsageError(f"--dump: no dump for {', '.join(missing)}: give --dump LANG=PATH for "
                               f"each of {', '.join(langs)} (offline), or none to download them all")
    return dumps


def _check_codes(langs, allow_unknown_lang: bool) -> None:
    """Every code a Wikipedia's (before any stage runs), unless --allow-unknown-lang."""
    for code in langs:
        if not allow_unknown_lang and not is_wikipedia(code):
            near = close_codes(code)
            fix = ("give its wiki's code, not the language's name (hu for hu.wikipedia.org)"
                   if looks_like_a_name(code) else
                   f"fix it, or pass {as_typed('--allow-unknown-lang')} for a wiki that is not on the list")
            raise click.UsageError(
                f"{as_typed('--lang', ','.join(langs))}: {code} is not the code of a Wikipedia"
                + (f" (did you mean {near[0]}?)" if near else "")
                + f" (pipeline/text/{LIST_FILE.name} lists them): {fix}")


# The text stages whose output, when empty, leaves the language without a corpus.
TEXT_STAGES = ("extract", "format", "dedup", "split", "filter", "shard")


def _require_text(data_dir, lang: str, stage: str) -> None:
    """StageError naming the language and the stage when `stage` left it no text."""
    summary = (read_manifest(stage_dir(data_dir, lang, stage)) or {}).get("summary") or {}
    if summary.get("output_bytes", 1):
        return
    detail = f"{summary.get('documents', 0):,} documents in, none kept"
    reasons = summary.get("rejections") or summary.get("dropped") or {}
    if isinstance(reasons, dict) and any(reasons.values()):
        detail += " (" + ", ".join(f"{k} {v:,}" for k, v in reasons.items() if v) + ")"
    raise StageError(f"{lang}: its corpus is empty after {stage}: {detail}; check its dump and "
                     f"the {stage} stage's settings (pipeline --lang {lang} {stage} --help), or "
                     "leave it out of --lang")


def run_languages(ctx, dumps: dict[str, str], *, date, allow_unknown_lang, vocab_size,
                  own_vocab_size, sampling_alpha, num_shards, encode_settings, dupe_factor,
                  no_encode, force) -> None:
    """`pipeline --lang hr,sr,bs run` (the module doc): each language's stages, the joint
    vocab, each language's encode with it, probe and report."""
    group, g = ctx.parent.command, ctx.obj
    langs = g.languages
    _check_codes(langs, allow_unknown_lang)
    started = time.time()
    before, after = [], []
    for stage in pipeline_stages():
        if stage.name not in ("ingest", "dedup"):
            (after if stage.name in ("encode", "probe") else before).append(stage.name)
    shared = joint_dir(g.data_dir, langs) / "vocab"

    def invoke(lang, name, **kwargs):
        cmd = group.get_command(ctx, name)
        ctx.obj = replace(g, lang=lang, langs=()) if lang else g
        try:
            with reported(name):
                ctx.invoke(cmd, **({"force": force} if name != "report" else {}), **kwargs)
        except StageError as exc:
            raise StageError(f"{lang}: {exc}" if lang else str(exc)) from None
        except click.ClickException as exc:
            if lang:
                exc.message = f"{lang}: {exc.message}"
            raise
        finally:
            ctx.obj = g

    options = {
        "download": {"date": date, "allow_unknown_lang": allow_unknown_lang},
        "shard": {"num_shards": num_shards} if num_shards else {},
        "vocab": {"vocab_size": own_vocab_size},
    }
    for lang in langs:
        for name in before:
            extra = ({"dump": dumps.get(lang)} if name == "download" else
                     {"input_": stage_dir(g.data_dir, lang, "format")} if name == "split" else {})
            invoke(lang, name, **options.get(name, {}), **extra)
            if name in TEXT_STAGES:
                _require_text(g.data_dir, lang, name)
    invoke(None, "joint-vocab", vocab_size=vocab_size, sampling_alpha=sampling_alpha)
    for lang in langs:
        for name in after:
            if name == "probe":
                invoke(lang, "probe")
            elif not no_encode:
                for seq, pred in encode_settings:
                    invoke(lang, "encode", vocab=shared, max_seq=seq, max_pred=pred,
                           dupe_factor=dupe_factor)
        invoke(lang, "report")
    log.info("run: all stages done for %s in %.1f s (data in %s; the joint vocab in %s)",
             ", ".join(langs), time.time() - started,
             ", ".join(str(g.data_dir / lang) for lang in langs), shared)
