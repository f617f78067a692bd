"""The parts of a run, built from its TrainConfig in the order the Trainer (trainer/loop.py) calls
them: first what checks the user's input (all before the process group exists, so that every
rank fails alike with one TrainError), then the model, the optimisation and the loader.

    start = plan_start(config, family)      # trainer/start.py: model config, tokenizers
    inputs = check_inputs(config, family, start)    # Inputs: phases, languages, start (fitted), notes
    attention, note = check_attention(config, family, inputs.all_shards())   # --doc_attention from the data
    changes, phases, lines = step_sizes(config, inputs.phases, family, inputs.start.model_config)
    model = build_model(config, family, inputs.start, env, init_weights=...)
    opt = build_optimization(config, model, env, plan)      # Optimization; plan: trainer/plan.py
    data = build_loader(config, phase, env, family.vocab_size(start.model_config), languages, max_steps)

trainer/startup.py makes the data's answers (--doc_attention, the step sizes) one config, once.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import os
from dataclasses import dataclass

import torch

from pipeline.encoding.hdf5_format import is_packed
from trainer.checkpoint.files import load_model_weights
from trainer.checkpoint.layout import CheckpointError, resolve_model_file
from trainer.config.errors import ConfigError
from trainer.config.languages import parse_alpha_schedule, schedule_steps
from trainer.config.resolved import resolve_doc_attention
from trainer.config.step_size import size_steps
from trainer.data.loader import ShardedTrainData
from trainer.data.masking import MaskingError, build_masker
from trainer.data.mixture import MixedTrainData, combined_shards, find_languages
from trainer.data.shards import DataError, Shards, find_shards
from trainer.data.vocabulary import data_tokenizer
from trainer.errors import TrainError
from trainer.extension import extend_start
from trainer.optim import build_optimizer, build_scheduler
from trainer.plan import RunPhase, RunPlan
from trainer.runtime.card import CardError, card_memory_gib, card_rows
from trainer.runtime.ds_settings import (
    clear_stale_shm_build_lock,
    disable_ds_shm_comm,
    lamb_zero_warning,
    shm_comm_disabled,
)
from trainer.start import check_data_tokenizer, load_init_weights

log = logging.getLogger("trainer")


@dataclass(frozen=True)
class Inputs:
    """What check_inputs found: the phases (one for a run without --phases), the languages ([] but
    with --input_dir LANG=DIR), the start (its model config fitted to the longest rows), and the
    lines to log once logging is set up."""
    phases: list
    languages: list
    start: object
    notes: list

    def all_shards(self) -> Shards:
        """Every phase's shards together (what --doc_attention is resolved from)."""
        return Shards([s for p in self.phases for s in p.shards.train],
                      [s for p in self.phases for s in p.shards.test])


def check_inputs(config, family, start) -> Inputs:
    """The data of every phase against the model, its tokenizer and the objective: the shards
    (with several languages, all of theirs: trainer/data/mixture.py), each phase's dynamic masker
    or None. All before the process group exists."""
    if config.phase2:   # a bad --init_checkpoint is found before output_dir is created
        try:
            resolve_model_file(config.init_checkpoint)
        except CheckpointError as exc:
            raise TrainError(str(exc)) from None
    if config.phases:
        return _check_phases(config, family, start)
    languages = find_languages(config.languages) if config.languages else []
    shards = combined_shards(languages) if languages else find_shards(config.input_dir)
    start, notes = _fit_positions(config, family, start, shards.seq_len, f"--input_dir {config.input_dir}")
    notes = notes + ([config.masking_note] if config.masking_note else [])
    check_data_tokenizer(config, start, shards, languages)
    # Packed rows hold no sentence pairs: NSP would learn from labels that are all 0.
    if shards.packed and not config.no_nsp:
        raise TrainError(f"--input_dir {_packed_folder(config, languages)} holds packed rows (encode --pack: no "
                         "sentence pairs, next-sentence labels all 0): add --no_nsp")
    phase = RunPhase(0, config.input_dir, 1.0, shards.seq_len, shards.max_pred, config.train_batch_size,
                     _rate(config), config.learning_rate, family.rope_thetas(start.model_config),
                     shards, _masker(config, shards, start.spec), config.eval_batch_size,
                     config.gradient_accumulation_steps)
    return Inputs([phase], languages, start, notes)


def _rate(config) -> float | None:
    return config.mlm_probability if config.masking == "dynamic" else None


def _masker(config, shards, spec, input_dir=None, rate=None):
    try:
        return build_masker(config, shards.seq_len, shards.max_pred, packed=shards.packed, spec=spec,
                            input_dir=input_dir, rate=rate)
    except MaskingError as exc:
        raise TrainError(str(exc)) from None


def _fit_positions(config, family, start, seq_len: int, where: str):
    """(start, notes): the model config extended as the flags ask (trainer/extension.py), then
    its positions fitted to rows of `seq_len` (the family's rule)."""
    start, notes = extend_start(config, family, start)
    try:
        model_config, note = family.fit_positions(start.model_config, seq_len)
    except ValueError as exc:
        raise TrainError(f"{where}: {exc}") from None
    return dataclasses.replace(start, model_config=model_config), notes + ([note] if note else [])


def _check_phases(config, family, start) -> Inputs:
    """Each phase's data found and checked (trainer/config/phases.py read the list): one tokenizer
    for all, rows the model can take, a seq_len that matches, packed rows only with --no_nsp."""
    found, first = [], None
    for i, p in enumerate(config.phases):
        where = f"phase {i + 1} (input_dir {p.input_dir})"
        try:
            shards = find_shards(p.input_dir, label=f"phase {i + 1}'s input_dir {p.input_dir}")
        except DataError as exc:
            raise TrainError(str(exc)) from None
        if p.seq_len is not None and p.seq_len != shards.seq_len:
            raise TrainError(f"{where} says seq_len {p.seq_len} but its rows are {shards.seq_len} tokens "
                             f"long: encode it with `pipeline encode --max-seq {p.seq_len}`, or fix seq_len")
        if shards.packed and not config.no_nsp:
            raise TrainError(f"{where} holds packed rows (encode --pack: no sentence pairs): add --no_nsp")
        data = data_tokenizer(p.input_dir, shards.train[0].path)
        if data is not None and first is not None and data.fingerprint != first[1].fingerprint:
            raise TrainError(f"{where} was encoded with {data.where}, not with the tokenizer of phase 1 "
                             f"({first[1].where}; fingerprints {data.fingerprint[:12]} and "
                             f"{first[1].fingerprint[:12]}): encode every phase with the same vocabulary")
        first = first or ((p, data) if data is not None else None)
        found.append(shards)
    longest = max(range(len(found)), key=lambda i: found[i].seq_len)
    start, notes = _fit_positions(config, family, start, found[longest].seq_len,
                                  f"phase {longest + 1} (input_dir {config.phases[longest].input_dir})")
    check_data_tokenizer(config, start, found[0], input_dir=config.phases[0].input_dir)
    phases, thetas = [], family.rope_thetas(start.model_config)
    for i, (p, shards) in enumerate(zip(config.phases, found)):
        rate = p.mlm_probability if p.mlm_probability is not None else _rate(config)
        thetas = {**thetas, **p.thetas}
        batch = p.train_batch_size or config.train_batch_size
        phases.append(RunPhase(i, p.input_dir, p.share, shards.seq_len, shards.max_pred, batch, rate,
                               p.learning_rate or config.learning_rate, thetas, shards,
                               _masker(config, shards, start.spec, p.input_dir, rate or config.mlm_probability),
                               config.eval_batch_size if "eval_batch_size" in config.explicit else batch,
                               config.gradient_accumulation_steps))
    return Inputs(phases, [], start, notes)


def size_steps_in_tokens(config, phases, family, model_config, world_size: int | None = None,
                         card_gib: float | None = None):
    """(config, phases, log lines): step_sizes' changes made to `config`."""
    changes, phases, lines = step_sizes(config, phases, family, model_config, world_size, card_gib)
    return config.replace(**changes), phases, lines


def step_sizes(config, phases, family, model_config, world_size: int | None = None,
               card_gib: float | None = None):
    """(the config's changes, phases, log lines) of a --tokens_per_step run of `family`'s
    `model_config`: each phase's micro-batch and
    accumulation (trainer/config/step_size.py); the config's train_batch_size and
    gradient_accumulation_steps become the first phase's (hparams.json, the loader of several
    languages), --phases' batches each phase's micro-batch. The cap of a micro-batch: the
    phase's train_batch_size where given (its own, or the flag), else on CUDA the card's rows
    (trainer/runtime/card.py; `card_gib`: its memory, this rank's card when None), else the
    flag's default; `world_size`: torchrun's (before the process group exists). Unchanged
    without --tokens_per_step."""
    if not config.tokens_per_step:
        return {}, phases, []
    world_size = world_size or int(os.environ.get("WORLD_SIZE", "1"))
    model = family.config_dict(model_config)
    given = "train_batch_size" in config.explicit
    caps = []
    for i, p in enumerate(phases):
        own = config.phases[i].train_batch_size if config.phases else None
        if own or given or config.device != "cuda":
            caps.append(own or config.train_batch_size)
            continue
        if card_gib is None:
            card_gib = card_memory_gib(int(os.environ.get("LOCAL_RANK", "0")))
        try:
            caps.append(card_rows(card_gib, model, p.seq_len))
        except CardError as exc:
            raise TrainError(f"phase {i + 1}: {exc}" if len(phases) > 1 else str(exc)) from None
    sizes = size_steps(config.tokens_per_step, [p.seq_len for p in phases], world_size, caps)
    explicit_eval = "eval_batch_size" in config.explicit
    phases = [dataclasses.replace(p, train_batch_size=z.micro, gradient_accumulation_steps=z.accum,
                                  tokens_per_step=config.tokens_per_step,
                                  eval_batch_size=config.eval_batch_size if explicit_eval else z.micro)
              for p, z in zip(phases, sizes)]
    first = sizes[0]
    changes = dict(
        train_batch_size=first.micro, gradient_accumulation_steps=first.accum,
        eval_batch_size=config.eval_batch_size if explicit_eval else first.micro,
        phases=tuple(dataclasses.replace(p, train_batch_size=z.micro) for p, z in zip(config.phases, sizes))
        if config.phases else None)
    lines = [z.line(i + 1, p.seq_len, world_size, len(phases)) for i, (p, z) in enumerate(zip(phases, sizes))]
    return changes, phases, lines


def check_attention(config, family, shards):
    """(--doc_attention resolved from the shards, the log line saying which):
    within documents where the packed files mark them (trainer/config/resolved.py); one
    TrainError where `within` was asked of files that cannot have it."""
    try:
        return resolve_doc_attention(config, family, shards.packed, shards.doc_starts)
    except ConfigError as exc:
        raise TrainError(str(exc)) from None


def _packed_folder(config, languages) -> str:
    packed = [lang for lang in languages if any(is_packed(s.path) for s in lang.shards.train)]
    return f"{packed[0].code}={packed[0].input_dir}" if packed else str(config.input_dir)


def describe_languages(config, facts: dict) -> str:
    """One line: each language's share of the samples and its sampling share at the start and
    the end of the --sampling_alpha schedule."""
    def one(code, f):
        shares = f["sampling_shares"]
        drawn = f"{shares[0]:.1%}" + (f" -> {shares[-1]:.1%}" if len(shares) > 1 else "")
        return f"{code} {f['train_samples']:,} samples ({f['sample_share']:.1%}), sampled {drawn}"
    return (f"{len(facts)} language{'s' if len(facts) != 1 else ''}, --sampling_alpha {config.sampling_alpha}: "
            + "; ".join(one(code, f) for code, f in facts.items()))


def describe_objective(config, family) -> str:
    """What is trained, in words (the log, hparams.json and the model card say it)."""
    task = "masked LM only (--no_nsp)" if config.no_nsp else "masked LM + next sentence"
    if family.named_in_objective:
        task = f"{family.name}, {task}"
    if config.masking == "static":
        return f"{task}; static masks from the HDF5"
    how = ", whole words" if config.whole_word_masking else ""
    rates = [p.mlm_probability or config.mlm_probability for p in config.phases or ()]
    rate = (" -> ".join(f"{r:g}" for r in rates) + " (by phase)" if len(set(rates)) > 1
            else f"{config.mlm_probability:g}")
    return (f"{task}; dynamic masks, {rate} of the tokens{how}, "
            f"{config.mask_replace_prob:g} [MASK] / {config.random_replace_prob:g} random")


def build_model(config, family, start, env, init_weights: bool):
    """The model on the device: the same initial weights on every rank (seeded), phase 2's
    weights from --init_checkpoint or --init_from's when `init_weights` (not when resuming),
    compiled in place when asked (before DDP or DeepSpeed wrap it)."""
    torch.manual_seed(config.seed)
    model = family.build(start.model_config, unpad=config.unpadded_rows, nsp=not config.no_nsp)
    if init_weights and start.source is not None:
        load_init_weights(model, family, start, config.seed, config.new_token_init)
    elif init_weights:
        try:
            src = load_model_weights(model, config.init_checkpoint)
        except CheckpointError as exc:
            raise TrainError(str(exc)) from None
        log.info("phase 2: weights from %s, fresh optimizer and schedule", src)
    model.to(env.device)
    if config.torch_compile:
        family.compile(model)
    return model


@dataclass
class Optimization:
    """What steps the weights: the optimizer and schedule, and around the model either DDP
    (several ranks), DeepSpeed's engine (--deepspeed) or nothing; the fp16 grad scaler."""
    optimizer: object
    scheduler: object
    scaler: torch.amp.GradScaler
    engine: object = None
    ddp: torch.nn.parallel.DistributedDataParallel | None = None


def build_optimization(config, model, env, plan) -> Optimization:
    """The optimizer, and the schedule that `plan` (trainer/plan.py: the phases' peaks, the
    --lr_schedule's shape, re-planned by the budget) gives the multiplier of at every step."""
    optimizer = build_optimizer(model, config.optimizer, config.learning_rate, config.weight_decay)

    def make_scheduler(opt):   # a partial: LambdaLR saves its (empty) __dict__, the plan is saved apart
        return build_scheduler(opt, config.warmup_proportion, plan.max_steps,
                               factor=functools.partial(RunPlan.lr_factor, plan))

    scaler = torch.amp.GradScaler("cuda", enabled=(config.precision == "fp16" and not config.deepspeed))
    if config.deepspeed:
        return _deepspeed(config, model, env, optimizer, make_scheduler, scaler)
    ddp = None
    if env.world_size > 1:
        ddp = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[env.local_rank] if config.device == "cuda" else None)
    return Optimization(optimizer, make_scheduler(optimizer), scaler, ddp=ddp)


def _deepspeed(config, model, env, optimizer, make_scheduler, scaler) -> Optimization:
    """deepspeed.initialize with the resolved DeepSpeed settings; its own optimizer and
    scheduler where its config names them, else ours."""
    if shm_comm_disabled():
        disable_ds_shm_comm()
    elif config.device == "cpu" and env.local_rank == 0 and (cleared := clear_stale_shm_build_lock()):
        log.warning(cleared)
    import deepspeed

    ds_config = config.deepspeed_settings
    warning = lamb_zero_warning(ds_config, config.optimizer)
    if warning and env.is_main:
        log.warning(warning)
    uses_ds_opt = "optimizer" in ds_config
    engine, optimizer, _, scheduler = deepspeed.initialize(
        model=model, config=ds_config,
        model_parameters=model.parameters() if uses_ds_opt else None,
        optimizer=None if uses_ds_opt else optimizer,
        lr_scheduler=None if "scheduler" in ds_config else make_scheduler)
    return Optimization(optimizer, scheduler, scaler, engine=engine)


def sampling_phases(config, max_steps: int) -> list[tuple[float, int]]:
    """The --sampling_alpha schedule as [(alpha, its first step)] of this run's planned max_steps."""
    return schedule_steps(parse_alpha_schedule(config.sampling_alpha), max_steps)


def build_loader(config, phase, env, vocab_size: int, languages=(), max_steps: int | None = None):
    """This rank's endless training batches of one phase (its shards, batch size and masker; a
    phase's own order from (seed, epoch)); page-locked on CUDA (non-blocking copies). With several
    languages, mixed by the --sampling_alpha schedule (its steps in samples of a rank) over the
    planned `max_steps` (the plan's: a budget's measured count)."""
    if languages:
        per_step = config.train_batch_size * config.gradient_accumulation_steps
        return MixedTrainData(languages, config.train_batch_size, config.seed, env.rank, env.world_size,
                              [(alpha, step * per_step) for alpha, step in
                               sampling_phases(config, config.max_steps if max_steps is None else max_steps)],
                              vocab_size=vocab_size, pin_memory=config.device == "cuda",
                              unpad=config.unpadded_rows, masker=phase.masker,
                              doc_attention=config.doc_attention)
    return ShardedTrainData(phase.shards.train, phase.train_batch_size, config.seed, env.rank,
                            env.world_size, vocab_size=vocab_size, pin_memory=config.device == "cuda",
                            unpad=config.unpadded_rows, masker=phase.masker, doc_attention=config.doc_attention)
