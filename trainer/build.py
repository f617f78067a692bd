"""The parts of a run, built from its TrainConfig in the order the Trainer (trainer/loop.py) calls
them: first what checks the user's input (all before the process group exists, so that every
rank fails alike with one TrainError), then the model, the optimisation and the loader.

    start = plan_start(config, family)      # trainer/start.py: model config, tokenizers
    shards, masker, languages = check_inputs(config, family, start)   # languages: [] for one folder
    model = build_model(config, family, start, env, init_weights=...)
    opt = build_optimization(config, model, env)            # Optimization
    data = build_loader(config, shards, env, family.vocab_size(start.model_config), masker, languages)
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from pipeline.encoding.hdf5_format import is_packed
from trainer.checkpoint.files import load_model_weights
from trainer.checkpoint.layout import CheckpointError, resolve_model_file
from trainer.config.languages import parse_alpha_schedule, schedule_steps
from trainer.data.loader import ShardedTrainData
from trainer.data.masking import MaskingError, build_masker
from trainer.data.mixture import MixedTrainData, combined_shards, find_languages
from trainer.data.shards import find_shards
from trainer.errors import TrainError
from trainer.optim import build_optimizer, build_scheduler
from trainer.runtime.ds_settings import disable_ds_shm_comm, lamb_zero_warning, shm_comm_disabled
from trainer.start import check_data_tokenizer, load_init_weights

log = logging.getLogger("trainer")


def check_inputs(config, family, start):
    """(the shards, the dynamic masker or None, the languages): the data against the model, its
    tokenizer and the objective. With several languages (--input_dir LANG=DIR) the shards are
    all of theirs and `languages` each language's (trainer/data/mixture.py); else []."""
    model_config = start.model_config
    if config.phase2:   # a bad --init_checkpoint is found before output_dir is created
        try:
            resolve_model_file(config.init_checkpoint)
        except CheckpointError as exc:
            raise TrainError(str(exc)) from None
    languages = find_languages(config.languages) if config.languages else []
    shards = combined_shards(languages) if languages else find_shards(config.input_dir)
    if shards.seq_len > family.max_positions(model_config):
        raise TrainError(f"the shards have seq_len {shards.seq_len} > the model's "
                         f"max_position_embeddings {family.max_positions(model_config)}")
    check_data_tokenizer(config, start, shards, languages)
    # Packed rows hold no sentence pairs: NSP would learn from labels that are all 0.
    if shards.packed and not config.no_nsp:
        raise TrainError(f"--input_dir {_packed_folder(config, languages)} holds packed rows (encode --pack: no "
                         "sentence pairs, next-sentence labels all 0): add --no_nsp")
    try:
        masker = build_masker(config, shards.seq_len, shards.max_pred, packed=shards.packed, spec=start.spec)
    except MaskingError as exc:
        raise TrainError(str(exc)) from None
    return shards, masker, languages


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
    return (f"{task}; dynamic masks, {config.mlm_probability:g} of the tokens{how}, "
            f"{config.mask_replace_prob:g} [MASK] / {config.random_replace_prob:g} random")


def build_model(config, family, start, env, init_weights: bool):
    """The model on the device: the same initial weights on every rank (seeded), phase 2's
    weights from --init_checkpoint or --init_from's when `init_weights` (not when resuming),
    compiled in place when asked (before DDP or DeepSpeed wrap it)."""
    torch.manual_seed(config.seed)
    model = family.build(start.model_config, unpad=config.unpad, nsp=not config.no_nsp)
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


def build_optimization(config, model, env) -> Optimization:
    optimizer = build_optimizer(model, config.optimizer, config.learning_rate, config.weight_decay)

    def make_scheduler(opt):
        return build_scheduler(opt, config.warmup_proportion, config.max_steps, kind=config.lr_schedule,
                               decay_proportion=config.decay_proportion)

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


def sampling_phases(config) -> list[tuple[float, int]]:
    """The --sampling_alpha schedule as [(alpha, its first step)] of this run's max_steps."""
    return schedule_steps(parse_alpha_schedule(config.sampling_alpha), config.max_steps)


def build_loader(config, shards, env, vocab_size: int, masker, languages=()):
    """This rank's endless training batches; page-locked on CUDA (non-blocking copies). With
    several languages, mixed by the --sampling_alpha schedule (its steps in samples of a rank)."""
    if languages:
        per_step = config.train_batch_size * config.gradient_accumulation_steps
        return MixedTrainData(languages, config.train_batch_size, config.seed, env.rank, env.world_size,
                              [(alpha, step * per_step) for alpha, step in sampling_phases(config)],
                              vocab_size=vocab_size, pin_memory=config.device == "cuda",
                              unpad=config.unpad, masker=masker)
    return ShardedTrainData(shards.train, config.train_batch_size, config.seed, env.rank, env.world_size,
                            vocab_size=vocab_size, pin_memory=config.device == "cuda", unpad=config.unpad,
                            masker=masker)
