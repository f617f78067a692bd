"""`pipeline encode`: shards + vocab.txt -> static-masked BERT instances in NVIDIA's HDF5 layout.

Usage:
    pipeline --lang hu encode                                   # seq 128, 20 predictions
    pipeline --lang hu encode --max-seq 512 --max-pred 80
    pipeline encode --input my_shards/ --vocab my_vocab/vocab.txt --output /tmp/out
    pipeline --lang hu encode --tokenizer xlm-roberta-base/ --pack   # any transformers fast tokenizer

Reads DATA_DIR/LANG/sharded/ (`*_training_*.txt`, `*_test_*.txt`: one sentence per line, a
blank line between documents) and the vocab DATA_DIR/LANG/vocab/ (its recorded case setting;
a bare vocab.txt means cased), and writes one HDF5 per shard to
DATA_DIR/LANG/hdf5_lower_case_{0,1}_seq_len_{L}_max_pred_{P}_masked_lm_prob_{p}_random_seed_{s}_dupe_factor_{d}[_wwm][_strip_accents]/{lang}wiki/
(under --output instead of DATA_DIR/LANG when given). Each shard is one task: its instances
depend only on the seed and the shard's name, whatever --workers.

Scripts without spaces: a MeCab vocab (`pipeline --lang ja vocab`) is tokenized on MeCab words
(vocab/kinds/mecab.py); otherwise, when the language has a word segmenter (ja mecab, zh jieba, th
pythainlp; `--word-segmenter` overrides, `none` turns it off), the tokens stay BERT's and the
segmenter's words give each token a word-start flag (vocab/core/word_starts.py). Either way
`--whole-word-masking` masks whole segmenter words and the files carry the optional
`word_starts` dataset (docs/hdf5_format.md) for the trainer's masking.

`--tokenizer DIR` encodes with a transformers fast tokenizer (a folder with tokenizer.json:
WordPiece, byte-level BPE, Unigram/SentencePiece; vocab/kinds/fast.py) instead of the vocab
stage's vocab.txt: its own ids, special tokens and pad id, `<s> A </s> B </s>` where BERT has
`[CLS] A [SEP] B [SEP]` (B's segment id as its post-processor gives it), a word start per token
from its word ids (the `word_starts` dataset), the fingerprint of its tokenizer.json as each
file's `tokenizer_fingerprint` attribute, and a folder name ending in `_tok-NAME-HASH`. The vocab
stage's folder is used the same way when it holds a tokenizer.json and no vocab.txt (`pipeline
vocab --model-type bytelevel-bpe`). The manifest records the tokenizer (folder, kind,
fingerprint) for vocab.txt data too.

A joint vocab of several languages (`pipeline --lang hr,sr,bs joint-vocab`, given as --vocab)
names the folder too (suffix `_joint-bs+hr+sr`, so a language's own-vocab data stays beside it)
and the manifest records it as `joint_vocab` (folder, languages, sampling_alpha): every
language encoded with it has the same `tokenizer.fingerprint`.

`--pack` writes packed rows instead of sentence pairs (pipeline/encoding/packing.py, layout 2:
whole documents in reading order, each `[CLS] tokens [SEP]`, an article longer than a row going
on in the next row after an inserted [CLS], no next-sentence pairs, padding only in a shard's
last row) into the same keys plus `doc_starts` (where each row's documents start), each file
marked by the root attribute `packed = 2` (the trainer reads it: hdf5_format.is_packed,
packed_layout), in a folder whose name ends in `_packed`. Any --max-seq works (8,192 and more):
a shard's ids are spilled to the run's work folder and memory-mapped, and rows are made a batch
at a time (pipeline/encoding/packed_file.py), so the memory does not grow with the shard. The
summary gives the articles' token-length deciles and the share of the tokens whose segment in
its row (its own article's tokens around it) is at least 512, 2,048 and 8,192 tokens.

The manifest's `training_text` (pipeline/encoding/hdf5_format.py) is what the trainer counts its
passes over the text by: training rows, the text's tokens, the dupe factor, per source its tokens
and `shard --weight`.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import os
from pathlib import Path

import click
import numpy as np

from common.atomic import atomic_path
from pipeline.core.errors import StageError
from pipeline.core.inputs import resolve_input
from pipeline.core.manifest import fingerprint_inputs, read_manifest, require_stage_output
from pipeline.core.options import force_option
from pipeline.core.registry import joint_name, lang_dir, stage_dir
from pipeline.core.runner import StageRun, Task
from pipeline.core.sources import shard_sources
from pipeline.encoding.hdf5_format import (
    DUPE_FACTOR,
    MASKED_LM_PROB,
    PACKED_LAYOUT,
    RANDOM_SEED,
    SHORT_SEQ_PROB,
    TOKENIZER_ATTR,
    TRAINING_TEXT,
    maskable_tokens,
    output_folder_name,
    training_text_record,
)
from pipeline.encoding.instances import Corpus, plan_instances
from pipeline.encoding.masking import Masker
from pipeline.encoding.packed_file import EmptyShard, merged_bins, packed_summary, write_packed_file
from pipeline.encoding.writer import InstanceFileWriter, batch_rows
from pipeline.text.language_settings import word_segmenter as language_segmenter
from vocab.core.layout import VocabError
from vocab.core.segmenters import CHOICES as SEGMENTER_CHOICES
from vocab.core.segmenters import SegmenterError, load_segmenter
from vocab.kinds import load_tokenizer

log = logging.getLogger("pipeline")

SHARD_PATTERNS = ("*_training_*.txt", "*_test_*.txt")
# Recorded in the manifest's options: bump it when the instances written for the same inputs
# change, so that finished runs of the old code are not taken for current ones. (Packed rows
# record their layout as the run's rules instead, `packed_layout`: a run of another layout is
# redone, and pair runs' manifests stay as they were.)
ENCODER_VERSION = 1
# HDF5 bytes per shard text byte and dupe pass, for the free-space check (measured 0.31-0.53:
# ukwiki at 128/20 and 512/80, the demo sample at 128/20).
HDF5_BYTES_PER_TEXT_BYTE = 0.5


def shard_seed(seed: int, shard_name: str) -> int:
    """A 64-bit seed from the global seed and the shard's name (stable across runs and machines)."""
    digest = hashlib.sha256(f"{seed}\0{shard_name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def find_shards(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise StageError(f"input {folder} does not exist: run `pipeline shard` first or check --input")
    shards = sorted({p for pat in SHARD_PATTERNS for p in folder.glob(pat)
                     if p.is_file() and not p.name.startswith(".")})
    if not shards:
        raise StageError(f"{folder} holds no shards (*_training_*.txt or *_test_*.txt): "
                         "run `pipeline shard` first or point --input at a shard folder")
    return shards


def check_options(max_seq: int, max_pred: int, masked_lm_prob: float, dupe_factor: int,
                  short_seq_prob: float) -> None:
    if max_seq < 8:
        raise StageError(f"--max-seq {max_seq} is too small: use at least 8 (BERT uses 128 and 512)")
    if max_pred < 1:
        raise StageError(f"--max-pred must be at least 1 (got {max_pred})")
    if max_pred > max_seq - 3:
        raise StageError(f"--max-pred {max_pred} is larger than a sequence of --max-seq {max_seq} "
                         f"allows ({max_seq - 3} tokens besides [CLS] and two [SEP]): lower it, "
                         "e.g. 20 for 128 or 80 for 512")
    if not 0 < masked_lm_prob < 1:
        raise StageError(f"--masked-lm-prob must be between 0 and 1 (got {masked_lm_prob})")
    if dupe_factor < 1:
        raise StageError(f"--dupe-factor must be at least 1 (got {dupe_factor})")
    if not 0 <= short_seq_prob <= 1:
        raise StageError(f"--short-seq-prob must be between 0 and 1 (got {short_seq_prob})")


def resolve_vocab(data_dir, lang: str, vocab: str | os.PathLike | None, tokenizer=None):
    """The tokenizer to encode with (vocab.kinds): --tokenizer (any tokenizer folder), --vocab,
    or the vocab stage's folder, whatever its kind."""
    if vocab is not None and tokenizer is not None:
        raise StageError("give --vocab or --tokenizer, not both: --tokenizer takes any "
                         "transformers tokenizer folder, --vocab a vocab.txt or its folder")
    if tokenizer is None and vocab is None:
        vocab_dir = stage_dir(data_dir, lang, "vocab")
        require_stage_output(vocab_dir, "vocab", option="--vocab")
        vocab = vocab_dir
    try:
        spec = load_tokenizer(tokenizer if tokenizer is not None else vocab)
        spec.check_usable()          # no mask token, a tokenizer.json Rust cannot read: one line, here
    except VocabError as exc:
        raise StageError(str(exc)) from None
    return spec


def tokenizer_record(spec) -> dict:
    """What the manifest says of the data's tokenizer (the trainer compares its fingerprint)."""
    return {"folder": str(spec.folder.resolve()), "kind": spec.piece_model, "fingerprint": spec.fingerprint,
            "size": spec.size, "pad_id": spec.pad_id}


def joint_vocab_record(spec) -> dict | None:
    """What the manifest says of a joint vocab (`pipeline joint-vocab`'s folder), else None."""
    m = read_manifest(spec.folder)
    if not m or m.get("stage") != "joint-vocab":
        return None
    o = m.get("options") or {}
    return {"folder": str(spec.folder.resolve()), "languages": o.get("languages"),
            "sampling_alpha": o.get("sampling_alpha"), "name": joint_name(o.get("languages") or ())}


# ---------------------------------------------------------------------------------------------
# One shard


def encode_shard(shard: Path, out_file: Path, spec, *, max_seq: int, max_pred: int,
                 masked_lm_prob: float, dupe_factor: int, short_seq_prob: float, seed: int,
                 whole_word_masking: bool = False, word_segmenter: str | None = None,
                 pack: bool = False, spill_dir: Path | None = None) -> dict:
    """Encode one shard into one HDF5 file (written atomically); returns its counts. Packed
    rows spill the shard's ids to `spill_dir` (default: beside `out_file`)."""
    empty = StageError(f"shard {shard} holds no sentences (empty): remove it or rerun "
                       "`pipeline shard`")
    task_seed = shard_seed(seed, shard.stem)
    # only where the kind says so: files of a vocab.txt stay byte for byte what they were
    attrs = {TOKENIZER_ATTR: spec.fingerprint} if spec.records_in_data else {}
    try:
        encoder = spec.encoder(word_segmenter)
        if pack:
            return write_packed_file(
                shard, out_file, encoder, spec, task_seed, max_seq=max_seq, max_pred=max_pred,
                masked_lm_prob=masked_lm_prob, dupe_factor=dupe_factor,
                whole_word_masking=whole_word_masking, attrs=attrs,
                spill_dir=Path(spill_dir) if spill_dir is not None else out_file.parent)
        corpus = Corpus.from_file(shard, encoder)
    except SegmenterError as exc:
        raise StageError(f"{shard}: {exc}") from None
    except EmptyShard:
        raise empty from None
    if corpus.n_docs == 0:
        raise empty
    plan = plan_instances(corpus, max_seq=max_seq, dupe_factor=dupe_factor,
                          short_seq_prob=short_seq_prob, seed=task_seed)
    masker = Masker(spec, max_seq=max_seq, max_pred=max_pred, masked_lm_prob=masked_lm_prob,
                    whole_word=whole_word_masking)
    rng = np.random.default_rng([task_seed & 0xFFFFFFFF, task_seed >> 32, 2])
    batch = batch_rows(max_seq)         # whole HDF5 chunks per write
    masked = 0
    with atomic_path(out_file) as tmp:
        optional = ("word_starts",) if corpus.word_starts is not None else ()
        with InstanceFileWriter(tmp, len(plan), max_seq, max_pred, optional=optional,
                                attrs=attrs) as writer:
            for start in range(0, len(plan), batch):
                arrays = masker.make_batch(corpus.tokens, plan.take(slice(start, start + batch)), rng,
                                           word_starts=corpus.word_starts)
                masked += int(np.count_nonzero(arrays["masked_lm_positions"]))
                writer.write(arrays)
    return {
        "shard": shard.name, "file": out_file.name, "instances": len(plan),
        "documents": corpus.n_docs, "sentences": corpus.n_sentences,
        "tokens": int(len(corpus.tokens)), "text_bytes": shard.stat().st_size,
        "random_next": int(plan.random_next.sum()), "masked": masked,
    }


# ---------------------------------------------------------------------------------------------
# The stage


def encode_task(shard: Path, files_dir: Path, spec, settings: dict) -> dict:
    """One task: one text shard into one HDF5 file."""
    return encode_shard(shard, files_dir / f"{shard.stem}.hdf5", spec, **settings)


def encode(data_dir="data", lang: str = "hu", workers: int | None = 1, input=None, output=None,
           force: bool = False, vocab=None, max_seq: int = 128, max_pred: int = 20,
           masked_lm_prob: float = MASKED_LM_PROB, dupe_factor: int = DUPE_FACTOR,
           short_seq_prob: float = SHORT_SEQ_PROB, seed: int = RANDOM_SEED,
           whole_word_masking: bool = False, word_segmenter: str | None = None,
           pack: bool = False, tokenizer=None) -> dict:
    """Encode every shard into NVIDIA-layout HDF5; returns the summary (see module doc).

    Usage: encode(data_dir="data", lang="hu", workers=2, max_seq=512, max_pred=80)
    """
    check_options(max_seq, max_pred, masked_lm_prob, dupe_factor, short_seq_prob)
    maskable = maskable_tokens(max_seq, pack)
    if max_pred < round(maskable * masked_lm_prob):
        log.warning("encode: --max-pred %d caps full-length sequences below --masked-lm-prob %g "
                    "(%d tokens would be masked)", max_pred, masked_lm_prob,
                    round(maskable * masked_lm_prob))
    in_dir = resolve_input(data_dir, lang, "encode", input)
    shards = find_shards(in_dir)
    for s in shards:
        if s.stat().st_size == 0:
            raise StageError(f"shard {s} is empty: remove it or rerun `pipeline shard`")
    spec = resolve_vocab(data_dir, lang, vocab, tokenizer)
    segmenter = spec.word_segmenter(language_segmenter(lang, word_segmenter))
    if segmenter is not None:
        try:
            load_segmenter(segmenter)   # a missing package: one line, before any work
        except SegmenterError as exc:
            raise StageError(str(exc)) from None

    joint = joint_vocab_record(spec)
    if joint and lang not in (joint["languages"] or ()):
        log.warning("encode: warning: %s is not one of the languages the joint vocab %s was made "
                    "for (%s)", lang, joint["folder"], ", ".join(joint["languages"] or ()))
    suffix = (f"_joint-{joint['name']}" if joint else "") + spec.folder_suffix()
    name = output_folder_name(spec.lower_case, max_seq, max_pred, masked_lm_prob, seed,
                              dupe_factor, whole_word_masking, spec.strip_accents, short_seq_prob,
                              packed=pack, tokenizer_suffix=suffix)
    root = (Path(output) if output is not None else lang_dir(data_dir, lang)) / name
    files_dir = root / f"{lang}wiki"
    options = {
        "max_seq": max_seq, "max_pred": max_pred, "masked_lm_prob": masked_lm_prob,
        "dupe_factor": dupe_factor, "short_seq_prob": short_seq_prob, "seed": seed,
        "whole_word_masking": whole_word_masking, "lower_case": spec.lower_case,
        "strip_accents": spec.strip_accents, "encoder_version": ENCODER_VERSION,
    }
    if segmenter is not None:   # only then: other languages' manifests stay as they were
        options["word_segmenter"] = segmenter
    if pack:                    # likewise: pair manifests stay as they were
        options["pack"] = True
        del options["short_seq_prob"]
    if spec.records_in_data:    # and vocab.txt manifests' options too
        options["tokenizer"] = {"kind": spec.piece_model, "fingerprint": spec.fingerprint}
    # packed rows of another layout (a finished run of the encode before) are redone, with a line
    rules = {"packed_layout": PACKED_LAYOUT} if pack else {}
    run = StageRun("encode", root, options, fingerprint_inputs([in_dir, *spec.files]), force=force,
                   workers=workers, expected_bytes=int(HDF5_BYTES_PER_TEXT_BYTE * dupe_factor
                                                       * sum(s.stat().st_size for s in shards)),
                   rules=rules)
    if run.complete:
        return run.skip()

    settings = dict(max_seq=max_seq, max_pred=max_pred, masked_lm_prob=masked_lm_prob,
                    dupe_factor=dupe_factor, short_seq_prob=short_seq_prob, seed=seed,
                    whole_word_masking=whole_word_masking, word_segmenter=segmenter, pack=pack)
    if pack:
        settings["spill_dir"] = run.work_dir   # the shard's ids while its rows are made
    outputs = [files_dir / f"{s.stem}.hdf5" for s in shards]
    tasks = [Task(s.name, s, outputs=(out,)) for s, out in zip(shards, outputs)]
    work = functools.partial(encode_task, files_dir=files_dir, spec=spec, settings=settings)
    infos = [info for _task, info in run.run_tasks(tasks, work, desc="encode", unit="shard")]
    packed = packed_figures(infos, max_seq) if pack else ({}, {})
    sources = shard_sources(in_dir, shards)   # and what the trainer counts its passes by:
    text = {TRAINING_TEXT: training_text_record(infos, sources, dupe_factor)}
    instances = sum(i["instances"] for i in infos)
    summary = {
        "shards": len(shards),
        "instances": instances,
        "training_instances": sum(i["instances"] for i in infos if "_training_" in i["shard"]),
        "documents": sum(i["documents"] for i in infos),
        "tokens": sum(i["tokens"] for i in infos),
        "random_next_share": round(sum(i["random_next"] for i in infos) / max(1, instances), 4),
        **packed[0],
        "output": str(files_dir),
    }
    return run.finish(summary, outputs=outputs,
                      # "vocab": the vocab.txt, or a tokenizer's folder (the trainer reads it)
                      extra={"shards": infos, "vocab": str(spec.location.resolve()),
                             "tokenizer": tokenizer_record(spec),
                             "sources": sources, **text,
                             **({"joint_vocab": joint} if joint else {}), **packed[1]},
                      shown={"output_bytes": sum(p.stat().st_size for p in outputs)})


def packed_figures(infos: list[dict], max_seq: int) -> tuple[dict, dict]:
    """The packed figures of the summary, and of the manifest beside it (the article-length
    histogram, which leaves the shards' records: one is enough)."""
    summary, bins = packed_summary(infos, max_seq), merged_bins(infos)
    for i in infos:
        i.pop("article_token_bins", None)
    return summary, {"article_token_bins": bins}


@click.command("encode")
@click.option("--input", "input_", type=click.Path(path_type=Path), default=None,
              help="Folder of *_training_*.txt / *_test_*.txt shards [default: DATA_DIR/LANG/sharded].")
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to create the hdf5_... folder in [default: DATA_DIR/LANG].")
@click.option("--vocab", type=click.Path(path_type=Path), default=None,
              help="vocab.txt or the vocab stage's folder, or a joint vocab's (joint-vocab) "
                   "[default: DATA_DIR/LANG/vocab].")
@click.option("--tokenizer", type=click.Path(path_type=Path), default=None,
              help="A transformers fast tokenizer folder (tokenizer.json: WordPiece, byte-level BPE, "
                   "Unigram) to encode with instead of a vocab.txt: its own ids, specials and pad id.")
@click.option("--max-seq", type=int, default=128, show_default=True, help="Sequence length L.")
@click.option("--max-pred", type=int, default=20, show_default=True,
              help="Most masked positions per instance P.")
@click.option("--masked-lm-prob", type=float, default=MASKED_LM_PROB, show_default=True,
              help="Share of the tokens masked in each instance (at most --max-pred).")
@click.option("--dupe-factor", type=int, default=DUPE_FACTOR, show_default=True,
              help="Passes over the documents, each with new masks and pairs.")
@click.option("--short-seq-prob", type=float, default=SHORT_SEQ_PROB, show_default=True,
              help="Share of instances with a shorter random target length.")
@click.option("--seed", type=click.IntRange(min=0), default=RANDOM_SEED, show_default=True,
              help="Seed of pairs and masks (with each shard's name: the same bytes for any --workers).")
@click.option("--whole-word-masking", is_flag=True, help="Mask all pieces of a word together "
              "(in Chinese, Japanese, Thai: all tokens of a segmenter word).")
@click.option("--word-segmenter", type=click.Choice(SEGMENTER_CHOICES), default=None,
              help="Word starts for a script without spaces [default: the language's: ja mecab, "
                   "zh jieba, th pythainlp]; none: no word starts. A MeCab vocab always uses MeCab.")
@click.option("--pack", is_flag=True, help="Packed rows for MLM-only training: whole documents in "
              "reading order, each [CLS] ... [SEP], a long one going on in the next row; "
              "doc_starts marks them; no next-sentence pairs, no padding but a shard's last "
              "row; the folder name ends in _packed.")
@force_option
@click.pass_obj
def command(g, input_, output, vocab, tokenizer, max_seq, max_pred, masked_lm_prob, dupe_factor,
            short_seq_prob, seed, whole_word_masking, word_segmenter, pack, force):
    """Shards + vocab.txt (or a transformers tokenizer) -> static-masked BERT instances (NVIDIA
    HDF5), one file per shard."""
    encode(**g.kwargs(), input=input_, output=output, force=force, vocab=vocab, max_seq=max_seq,
           max_pred=max_pred, masked_lm_prob=masked_lm_prob, dupe_factor=dupe_factor,
           short_seq_prob=short_seq_prob, seed=seed, whole_word_masking=whole_word_masking,
           word_segmenter=word_segmenter, pack=pack, tokenizer=tokenizer)
