"""`pipeline run`: every stage in order, each resuming or skipping what is already done.

Usage:
    pipeline --lang hu run                              # download the latest huwiki dump
    pipeline --lang hu run --dump data/sample/huwiki-sample.xml.bz2
    pipeline --lang uk run --dump ukwiki.xml.xz --vocab-size 16000 --encode 128/20
    pipeline --lang hu run --dump huwiki.xml.bz2 --source web=cc100-hu.txt.xz --weight web=0.5
    pipeline --lang hu run --source web=cc100-hu.txt.xz     # no dump: a corpus without Wikipedia

With --source, ingest and dedup run too (Wikipedia and every source deduplicated together,
pipeline/stages/dedup.py) and split reads the deduplicated mix; without --dump nothing is
downloaded and the stages that need the dump (download, extract, format, probe) are skipped.

Ends by writing DATA_DIR/LANG/report.html (`pipeline report`) and printing its path.
"""
from __future__ import annotations

import logging
import time

import click

from pipeline.core.os_errors import reported
from pipeline.core.registry import pipeline_stages, stage_dir
from pipeline.core.sources import parse_pairs, parse_weights
from pipeline.encoding.hdf5_format import DUPE_FACTOR

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
@click.option("--dump", type=click.Path(dir_okay=False), default=None,
              help="A local dump file instead of downloading one.")
@click.option("--date", default="latest", show_default=True,
              help="Dump date to download (YYYYMMDD or 'latest').")
@click.option("--allow-unknown-lang", is_flag=True,
              help="Take --lang as it is (download's check against the dump's <siteinfo> and the "
                   "list of Wikipedias is skipped): for a wiki that is not on the list.")
@click.option("--vocab-size", type=click.IntRange(min=200), default=32000, show_default=True,
              help="Lines of vocab.txt, special tokens included (the vocab stage).")
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
def command(ctx, dump, date, allow_unknown_lang, vocab_size, num_shards, encode_settings, dupe_factor,
            no_encode, sources, weights, formats, text_field, doc_per_line, force):
    group = ctx.parent.command
    started = time.time()
    named = parse_pairs(sources, "--source")
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
        "vocab": {"vocab_size": vocab_size},
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
