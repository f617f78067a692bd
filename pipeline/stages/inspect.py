"""`pipeline inspect FILE.hdf5`: decoded instances and statistics of an encoded shard.

Usage:
    pipeline inspect data/hu/hdf5_lower_case_0_seq_len_128_.../huwiki/huwiki_training_0.hdf5
    pipeline inspect FILE.hdf5 --vocab data/hu/vocab --show 5

Prints a few instances as tokens ([CLS] A [SEP] B [SEP], masked positions as [MASK→orig],
random replacements as {new→orig}, kept ones as <orig>) with their next-sentence label, then
statistics over the whole file: instances, masked share of the non-special tokens, how the
masked tokens split into [MASK] / random / kept, the random-next share, mean length and the
share shorter than the sequence, and a check of the masked positions (ascending, distinct,
inside the sequence, never [CLS]/[SEP]/padding).

Packed rows (`encode --pack`) are shown as rows, not A/B pairs; a row of packed layout 2 one
segment (one document's tokens, from its [CLS]) a line, and the statistics add the segments
and the share of the tokens whose segment is at least 512, 2,048 and 8,192 tokens long, with
the articles' token-length deciles of the encode run's manifest where it lies beside the file.

The vocab comes from --vocab, else from the encode run's manifest, else DATA_DIR/LANG/vocab.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from common.numbers import plural
from pipeline.core.errors import StageError
from pipeline.core.manifest import MANIFEST
from pipeline.core.registry import stage_dir
from pipeline.encoding.context import segment_lengths
from pipeline.encoding.hdf5_format import HDF5FormatError, check_file, packed_layout
from pipeline.encoding.stats import render, render_segments, statistics
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer


def encode_manifest(file: Path) -> dict:
    """The manifest of the encode run that wrote `file` (FOLDER/{lang}wiki/FILE), or {}."""
    manifest = file.resolve().parent.parent / MANIFEST
    if not manifest.is_file():
        return {}
    try:
        return json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def find_vocab(file: Path, vocab: Path | None, data_dir, lang: str):
    """The vocabulary `file` was encoded with: --vocab, else the one encode recorded (a vocab.txt
    or a tokenizer folder), else the vocab stage's folder."""
    candidates = []
    if vocab is not None:
        candidates.append(Path(vocab))
    else:
        recorded = encode_manifest(file).get("vocab")
        if recorded:
            candidates.append(Path(recorded))
        candidates.append(file.resolve().parent.parent.parent / "vocab")
        candidates.append(stage_dir(data_dir, lang, "vocab"))
    for c in candidates:
        if c.is_file() or (c / "vocab.txt").is_file() or (c / "tokenizer.json").is_file():
            try:
                return load_tokenizer(c)
            except VocabError as exc:
                raise StageError(str(exc)) from None
    raise StageError(f"no vocab.txt found for {file} (looked in {', '.join(map(str, candidates))}): "
                     "pass --vocab PATH")


def open_instances(file: Path):
    """The file opened for reading, once it passes the HDF5 contract's check."""
    import h5py

    if not file.is_file():
        raise StageError(f"{file} does not exist: give an .hdf5 file written by `pipeline encode`")
    try:
        check_file(file)
    except HDF5FormatError as exc:
        raise StageError(f"{exc}: not a BERT pretraining HDF5 file; give one written by "
                         "`pipeline encode`") from None
    return h5py.File(file, "r")


def inspect_file(file, vocab=None, show: int = 3, data_dir="data", lang: str = "hu",
                 echo=click.echo) -> dict:
    """Print `show` decoded instances and the file's statistics; returns the statistics."""
    file = Path(file)
    f = open_instances(file)
    with f:
        spec = find_vocab(file, vocab, data_dir, lang)
        n, L = f["input_ids"].shape
        P = f["masked_lm_positions"].shape[1]
        echo(f"{file}: {n:,} instances, max_seq {L}, max_pred {P}, vocab {getattr(spec, 'vocab_file', spec.folder)}")
        layout = packed_layout(file)
        for i in range(min(show, n)):
            row = (f["input_ids"][i], f["input_mask"][i], f["masked_lm_positions"][i],
                   f["masked_lm_ids"][i], spec)
            if "doc_starts" in f:   # layout 2: one segment (one document's tokens) a line
                segments = render_segments(*row, f["doc_starts"][i])
                sizes = " + ".join(map(str, segment_lengths(f["doc_starts"][i:i + 1],
                                                            f["input_mask"][i:i + 1])))
                echo(f"\n#{i}  length {int(f['input_mask'][i].sum())}, packed row, "
                     f"{plural(len(segments), 'segment')}: {sizes} tokens")
                for text in segments:
                    echo(f"  | {text}")
                continue
            a, b = render(*row)
            if layout:   # documents back to back, a [SEP] after each: no A/B pair
                echo(f"\n#{i}  length {int(f['input_mask'][i].sum())}, packed row")
                echo(f"  {a} {b}".rstrip())
                continue
            label = "random next (1)" if f["next_sentence_labels"][i] else "actual next (0)"
            echo(f"\n#{i}  length {int(f['input_mask'][i].sum())}, B is {label}")
            echo(f"  A: {a}")
            echo(f"  B: {b}")
        st = statistics(f, spec)
    pct = lambda a, b: f"{100 * a / b:.2f}%" if b else "n/a"  # noqa: E731
    m = st["masked"]
    echo("\nstatistics")
    echo(f"  instances            {n:,}")
    echo(f"  masked tokens        {m:,} = {pct(m, st['tokens'])} of {st['tokens']:,} non-special tokens")
    echo(f"  of those: [MASK] {pct(st['as_mask'], m)}, random {pct(st['random'], m)}, "
         f"kept {pct(st['kept'], m)}")
    echo(f"  random next (B)      {pct(st['random_next'], n)}")
    echo(f"  mean length          {st['length_sum'] / max(1, n):.1f} of {L}")
    echo(f"  real tokens          {pct(st['length_sum'], n * L)} of the {n * L:,} slots (the rest is padding)")
    echo(f"  shorter than {L:<4}    {pct(st['shorter'], n)}  (under {L // 2}: {pct(st['half'], n)})")
    bad = st["bad_positions"]
    echo(f"  masked positions     {'all valid' if not bad else str(bad) + ' instances with invalid positions'}")
    if "segments" in st:
        echo(f"  segments             {st['segments']:,} ({st['segments'] / max(1, n):.2f} a row; "
             f"packed layout {layout})")
        echo("  tokens whose segment (own article in the row) has at least "
             + ", ".join(f"{int(t):,}: {pct(c, st['length_sum'])}"
                         for t, c in st["context_tokens"].items()))
    articles = (encode_manifest(file).get("summary") or {}).get("article_tokens")
    if articles:
        order = sorted(articles, key=lambda k: (k == "max", len(k), k))   # p10 ... p90, max
        echo("  article tokens       " + ", ".join(f"{k} {articles[k]:,}" for k in order)
             + "  (deciles of the encode run)")
    return st


@click.command("inspect")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--vocab", type=click.Path(path_type=Path), default=None,
              help="vocab.txt or its folder [default: from the encode manifest or DATA_DIR/LANG/vocab].")
@click.option("--show", type=click.IntRange(min=0), default=3, show_default=True,
              help="How many instances to print.")
@click.pass_obj
def command(g, file, vocab, show):
    """Show decoded instances and statistics of an encoded HDF5 file."""
    inspect_file(file, vocab=vocab, show=show, data_dir=g.data_dir, lang=g.lang)
