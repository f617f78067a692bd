"""The parts of a run, built from its TrainConfig in the order the Trainer (trainer/loop.py) calls
them: first what checks the user's input (all before the process group exists, so that every
rank fails alike with one TrainError), then the model, the optimisation and the loader.

    model_config = load_model_config(config, family)
    shards, masker = check_inputs(config, family, model_config)
    model = build_model(config, family, model_config, env, init_weights=...)
    opt = build_optimization(config, model, env)            # Optimization
    data = build_loader(config, shards, env, family.vocab_size(model_config), masker)
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from trainer.checkpoint.files import load_model_weights
from trainer.checkpoint.layout import CheckpointError, resolve_model_file
from trainer.data.loader import ShardedTrainData
from trainer.data.masking import MaskingError, build_masker
from trainer.data.shards import find_shards
from trainer.errors import TrainError
from trainer.optim import build_optimizer, build_scheduler
from trainer.runtime.ds_settings import disable_ds_shm_comm, lamb_zero_warning, shm_comm_disabled

log = logging.getLogger("trainer")


def load_model_config(config, family):
    """The model JSON (--bert_config / --model_config) as the family's config."""
    try:
        return family.read_config_file(config.bert_config)
    except ValueError as exc:
        raise TrainError(str(exc)) from None


def check_inputs(config, family, model_config):
    """(the shards, the dynamic masker or None): the data against the model and the objective."""
    if config.phase2:   # a bad --init_checkpoint is found before output_dir is created
        try:
            resolve_model_file(config.init_checkpoint)
        except CheckpointError as exc:
            raise TrainError(str(exc)) from None
    shards = find_shards(config.input_dir)
    if shards.seq_len > family.max_positions(model_config):
        raise TrainError(f"the shards have seq_len {shards.seq_len} > the model's "
                         f"max_position_embeddings {family.max_positions(model_config)}")
    # Packed rows hold no sentence pairs: NSP would learn from labels that are all 0.
    if shards.packed and not config.no_nsp:
        raise TrainError(f"--input_dir {config.input_dir} holds packed rows (encode --pack: no "
                         "sentence pairs, next-sentence labels all 0): add --no_nsp")
    try:
        masker = build_masker(config, shards.seq_len, shards.max_pred, packed=shards.packed)
    except MaskingError as exc:
        raise TrainError(str(exc)) from None
    return shards, masker


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


def build_model(config, family, model_config, env, init_weights: bool):
    """The model on the device: the same initial weights on every rank (seeded), phase 2's
    weights from --init_checkpoint when `init_weights`, compiled in place when asked (before
    DDP or DeepSpeed wrap it)."""
    torch.manual_seed(config.seed)
    model = family.build(model_config, unpad=config.unpad, nsp=not config.no_nsp)
    if init_weights:
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


def build_loader(config, shards, env, vocab_size: int, masker) -> ShardedTrainData:
    """This rank's endless training batches; page-locked on CUDA (non-blocking copies)."""
    return ShardedTrainData(shards.train, config.train_batch_size, config.seed, env.rank, env.world_size,
                            vocab_size=vocab_size, pin_memory=config.device == "cuda", unpad=config.unpad,
                            masker=masker)
