"""Where a run's model starts: its config, its tokenizer checked against the data's, and its first
weights (random, or --init_from's, a new vocabulary's rows transferred). trainer/start/parts.py asks.

    start = plan_start(config, family)          # before the process group: one TrainError each
    start.model_config, start.spec, start.export_class
    check_data_tokenizer(config, start, shards, languages)   # the data's tokenizer is the run's
    load_init_weights(model, family, start, seed)   # --init_from's weights into the built model

- The config: the model JSON (--model_config), or --init_from's (a transformers config.json, a
  run's meta.json), with the run tokenizer's special ids (family.with_vocab: RoBERTa's pad id).
- The tokenizer: --vocab_file (a vocab.txt or a tokenizer folder), by default --init_from's own.
  When --vocab_file is another tokenizer than --init_from's (their fingerprints differ), the
  model's vocabulary is adapted to it: vocab_size becomes its size, and the token rows are made by
  trainer/models/vocab_transfer.py. A vocabulary larger than the model's rows, or data encoded
  with another tokenizer than the run's, is one line.
- The weights: --init_from's, read safely (trainer/models/loading.py), under the model's names,
  and one line saying what was loaded, initialised fresh and left out.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from trainer.checkpoint.files import load_file
from trainer.checkpoint.layout import CheckpointError
from trainer.config.init_from import InitSource, open_init_source
from trainer.data.vocabulary import data_tokenizer, load_spec
from trainer.errors import TrainError
from trainer.models.family import ModelFileError
from trainer.models.loading import as_model_names, fit_weights, read_weight_files
from trainer.models.vocab_transfer import plan_transfer, transfer_rows
from vocab.core.layout import VocabError

log = logging.getLogger("trainer")


@dataclass(frozen=True)
class Start:
    model_config: object               # the family's config the model is built from
    spec: object | None                # the run's tokenizer (of its kind: vocab/kinds), loaded once
    source: InitSource | None = None   # --init_from
    source_config: object | None = None   # --init_from's config, before the run's tokenizer
    old_spec: object | None = None     # --init_from's tokenizer, when the vocabulary is adapted
    export_class: str | None = None    # the transformers class the run exports as (None: the family's)


def plan_start(config, family) -> Start:
    """The model config and the tokenizers of the run (see the module docstring): each opened
    once, here (--init_from's source was opened when the config was resolved)."""
    source = config.init_source or (open_init_source(config.init_from) if config.init_from else None)
    try:
        if source is None:
            model_config = family.read_config_file(config.model_config)
        else:
            model_config = family.read_config(source.config, source=f"--init_from {source.path}")
    except ValueError as exc:
        raise TrainError(str(exc)) from None
    try:
        spec = load_spec(config.vocab_file) if config.vocab_file else None
        own = None
        if source is not None and source.tokenizer is not None:
            same = config.vocab_file and str(source.tokenizer) == str(config.vocab_file)
            own = spec if same else load_spec(source.tokenizer)
    except VocabError as exc:
        raise TrainError(str(exc)) from None
    if source is None:
        return Start(_for_tokenizer(config, family, model_config, spec), spec)
    if spec is not None and own is None:
        log.warning("--init_from %s holds no tokenizer: --vocab_file %s is taken as the model's own",
                    source.path, config.vocab_file)
    adapt = spec is not None and own is not None and spec.fingerprint != own.fingerprint
    if adapt:
        new_config = family.with_vocab(model_config, spec, size=spec.size)
    else:
        new_config = _for_tokenizer(config, family, model_config, spec, source)
    return Start(new_config, spec, source, model_config, own if adapt else None, source.export_class)


def _for_tokenizer(config, family, model_config, spec, source: InitSource | None = None):
    """The config with the tokenizer's special ids; a tokenizer larger than its rows is one line."""
    if spec is None:
        return model_config
    rows = family.vocab_size(model_config)
    if spec.size > rows:
        if source is None:
            raise TrainError(f"--vocab_file {config.vocab_file} has {spec.size} tokens but the model's "
                             f"vocab_size is {rows}: set vocab_size >= {spec.size} in --model_config")
        raise TrainError(f"--vocab_file {config.vocab_file} has {spec.size} tokens but --init_from "
                         f"{source.path}'s model has {rows} rows (vocab_size): pass the model's own "
                         "tokenizer, or put it in the model's folder to adapt the vocabulary to this one")
    return family.with_vocab(model_config, spec)


def check_data_tokenizer(config, start: Start, shards, languages=(), input_dir=None) -> None:
    """One line when --input_dir (or `input_dir`: a phase's) was encoded with another tokenizer
    than the run's; with several languages, also when the languages were encoded with different
    tokenizers."""
    input_dir = config.input_dir if input_dir is None else input_dir
    folders = [(f"{lang.code}={lang.input_dir}", lang.input_dir, lang.shards.train[0].path)
               for lang in languages] or [(str(input_dir), input_dir,
                                           shards.train[0].path if shards.train else None)]
    found = [(name, data) for name, folder, first in folders
             if (data := data_tokenizer(folder, first)) is not None]
    for (name, data), (other, theirs) in zip(found, found[1:]):
        if data.fingerprint != theirs.fingerprint:
            raise TrainError(f"--input_dir {other} was encoded with {theirs.where}, not with the "
                             f"tokenizer of --input_dir {name} ({data.where}; fingerprints "
                             f"{theirs.fingerprint[:12]} and {data.fingerprint[:12]}): encode every "
                             "language with the same (joint) vocabulary, or leave one out")
    spec = start.spec
    if not found or spec is None or found[0][1].fingerprint == spec.fingerprint:
        return
    name, data = found[0]
    fps = f"fingerprints {data.fingerprint[:12]} and {spec.fingerprint[:12]}"
    source = start.source
    if source is not None and "vocab_file" not in config.explicit:
        raise TrainError(f"--input_dir {name} was encoded with {data.where}, not with "
                         f"--init_from {source.path}'s own tokenizer ({fps}): encode the data with "
                         f"it (pipeline encode --tokenizer {source.tokenizer}), or pass --vocab_file "
                         "NEW (the data's tokenizer) to adapt the vocabulary")
    raise TrainError(f"--vocab_file {config.vocab_file} is not the tokenizer --input_dir "
                     f"{name} was encoded with ({data.where}; {fps}): pass the data's "
                     "tokenizer as --vocab_file, or encode the data with this one")


def source_weights(source: InitSource, model, family) -> dict:
    """--init_from's tensors under `model`'s names: a wiki2bert checkpoint's (tensors only,
    weights_only) or a transformers folder's weight files."""
    state = load_file(source.weight_files[0]) if source.is_run else read_weight_files(source.weight_files)
    return as_model_names(state, model, family.base_prefix)


def load_init_weights(model, family, start: Start, seed: int, new_token_init: str = "pieces") -> None:
    """--init_from's weights into `model` (built from start.model_config, randomly initialised):
    a new vocabulary's rows transferred, what was loaded, fresh and left out logged."""
    source = start.source
    try:
        state = source_weights(source, model, family)
        if start.old_spec is not None:
            plan = plan_transfer(start.old_spec, start.spec, pieces=new_token_init == "pieces")
            state = transfer_rows(state, family.vocab_rows, plan, seed)
            log.info("vocabulary adapted from --init_from's %s tokenizer to --vocab_file's %s: %s",
                     start.old_spec.piece_model, start.spec.piece_model, plan.summary())
        state = family.move_rows(state, start.source_config, start.model_config)
        state, extended = family.extend_position_rows(state, start.model_config)   # --max_position_embeddings
        if extended:
            log.info(extended)
        report = fit_weights(model, state)
    except (ModelFileError, CheckpointError) as exc:
        raise TrainError(f"--init_from {source.path}: {exc}") from None
    log.info("init_from %s: %s; a fresh optimizer and schedule", source.describe(), report.line())
