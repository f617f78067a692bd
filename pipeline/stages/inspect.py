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

The vocab comes from --vocab, else from the encode run's manifest, else DATA_DIR/LANG/vocab.
"""
from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from pipeline.core.errors import StageError
from pipeline.core.manifest import MANIFEST
from pipeline.core.registry import stage_dir
from pipeline.encoding.hdf5_format import HDF5FormatError, check_file
from vocab.spec import VocabError, VocabSpec, load_vocab

READ_ROWS = 8192


def find_vocab(file: Path, vocab: Path | None, data_dir, lang: str) -> VocabSpec:
    candidates = []
    if vocab is not None:
        candidates.append(Path(vocab))
    else:
        manifest = file.resolve().parent.parent / MANIFEST
        if manifest.is_file():
            recorded = json.loads(manifest.read_text(encoding="utf-8")).get("vocab")
            if recorded:
                candidates.append(Path(recorded))
        candidates.append(file.resolve().parent.parent.parent / "vocab")
        candidates.append(stage_dir(data_dir, lang, "vocab"))
    for c in candidates:
        if c.is_file() or (c / "vocab.txt").is_file():
            try:
                return load_vocab(c)
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


def render(ids, mask, masked_pos, masked_ids, spec: VocabSpec) -> tuple[str, str]:
    """The A and B sides of one instance as text, masked positions marked."""
    tokens = spec.tokens
    length = int(mask.sum())
    labels = {int(p): int(o) for p, o in zip(masked_pos, masked_ids) if p > 0}
    out = []
    for pos in range(length):
        t = tokens[int(ids[pos])]
        if pos in labels:
            orig = tokens[labels[pos]]
            if ids[pos] == spec.mask_id:
                t = f"[MASK→{orig}]"
            elif ids[pos] == labels[pos]:
                t = f"<{orig}>"
            else:
                t = f"{{{t}→{orig}}}"
        out.append(t)
    sep = out.index("[SEP]") if "[SEP]" in out else len(out) - 1
    return " ".join(out[:sep + 1]), " ".join(out[sep + 1:])


def statistics(f, spec: VocabSpec) -> dict:
    n, L = f["input_ids"].shape
    special = np.array([spec.cls_id, spec.sep_id], dtype=np.int64)
    tot = {"instances": n, "tokens": 0, "masked": 0, "as_mask": 0, "kept": 0, "random": 0,
           "random_next": 0, "shorter": 0, "half": 0, "bad_positions": 0, "length_sum": 0}
    for s in range(0, n, READ_ROWS):
        ids = f["input_ids"][s:s + READ_ROWS]
        mask = f["input_mask"][s:s + READ_ROWS]
        pos = f["masked_lm_positions"][s:s + READ_ROWS].astype(np.int64)
        orig = f["masked_lm_ids"][s:s + READ_ROWS]
        nsp = f["next_sentence_labels"][s:s + READ_ROWS]
        length = mask.sum(axis=1).astype(np.int64)
        valid = pos > 0
        count = valid.sum(axis=1)
        at = np.take_along_axis(ids, pos, axis=1)
        tot["tokens"] += int((length - 3).sum())
        tot["masked"] += int(count.sum())
        tot["as_mask"] += int(((at == spec.mask_id) & valid).sum())
        tot["kept"] += int(((at == orig) & valid).sum())
        tot["random_next"] += int(nsp.sum())
        tot["length_sum"] += int(length.sum())
        tot["shorter"] += int((length < L).sum())
        tot["half"] += int((length < L // 2).sum())
        # positions: a prefix of nonzero entries, ascending, inside the sequence, not special
        prefix_ok = (np.arange(pos.shape[1])[None, :] < count[:, None]) == valid
        ascending = np.where(valid[:, 1:], np.diff(pos, axis=1) > 0, True).all(axis=1)
        inside = np.where(valid, pos < length[:, None], True).all(axis=1)
        not_special = ~(valid & np.isin(orig, special)).any(axis=1)   # [CLS]/[SEP] never masked
        tot["bad_positions"] += int((~(prefix_ok.all(axis=1) & ascending & inside & not_special)).sum())
    tot["random"] = tot["masked"] - tot["as_mask"] - tot["kept"]
    return tot


def inspect_file(file, vocab=None, show: int = 3, data_dir="data", lang: str = "hu",
                 echo=click.echo) -> dict:
    """Print `show` decoded instances and the file's statistics; returns the statistics."""
    file = Path(file)
    f = open_instances(file)
    with f:
        spec = find_vocab(file, vocab, data_dir, lang)
        n, L = f["input_ids"].shape
        P = f["masked_lm_positions"].shape[1]
        echo(f"{file}: {n:,} instances, max_seq {L}, max_pred {P}, vocab {spec.vocab_file}")
        for i in range(min(show, n)):
            a, b = render(f["input_ids"][i], f["input_mask"][i], f["masked_lm_positions"][i],
                          f["masked_lm_ids"][i], spec)
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
    echo(f"  shorter than {L:<4}    {pct(st['shorter'], n)}  (under {L // 2}: {pct(st['half'], n)})")
    echo(f"  masked positions     {'all valid' if not st['bad_positions'] else str(st['bad_positions']) + ' instances with invalid positions'}")
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
