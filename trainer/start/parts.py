"""The parts of a run, built from its TrainConfig as the Trainer's start (trainer/start/steps.py,
which checks the input first) asks for them: the step sizes of --tokens_per_step, the model, the
optimisation and the loader.

    changes, phases, lines = step_sizes(config, phases, family, model_config)   # --tokens_per_step
    model = build_model(config, family, start, env, init_weights=...)
    opt = build_optimization(config, model, env, plan)      # Optimization; plan: trainer/schedule/plan.py
    data = build_loader(config, phase, env, family.vocab_size(start.model_config), languages, max_steps)
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import os
from dataclasses import dataclass

import torch

from common.numbers import plural
from trainer.checkpoint.files import load_model_weights
from trainer.checkpoint.layout import CheckpointError
from trainer.config.languages import parse_alpha_schedule, schedule_steps
from trainer.config.step_size import size_steps
from trainer.data.loader import ShardedTrainData
from trainer.data.mixture import MixedTrainData
from trainer.errors import TrainError
from trainer.runtime.card import CardError, card_memory_gib, card_rows
from trainer.runtime.ds_settings import (
    clear_stale_shm_build_lock,
    disable_ds_shm_comm,
    lamb_zero_warning,
    shm_comm_disabled,
)
from trainer.schedule.optim import build_optimizer, build_scheduler
from trainer.schedule.plan import RunPlan
from trainer.start.origin import load_init_weights

log = logging.getLogger("trainer")


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


def describe_languages(config, facts: dict) -> str:
    """One line: each language's share of the samples and its sampling share at the start and
    the end of the --sampling_alpha schedule."""
    def one(code, f):
        shares = f["sampling_shares"]
        drawn = f"{shares[0]:.1%}" + (f" -> {shares[-1]:.1%}" if len(shares) > 1 else "")
        return f"{code} {f['train_samples']:,} samples ({f['sample_share']:.1%}), sampled {drawn}"
    return (f"{plural(len(facts), 'language')}, --sampling_alpha {config.sampling_alpha}: "
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
    """The optimizer, and the schedule that `plan` (trainer/schedule/plan.py: the phases' peaks, the
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
