"""The run's start, one step a function, in the order Trainer.__init__ (trainer/loop.py) calls them.

    inputs = check(config, family)                           # the data against the model and tokenizer
    config, phases, notes = resolve(config, family, inputs)  # the config, once, with the data's answers
    env = join(config, family, notes)                        # the process group; logging
    out = open_output(config, family, inputs.start, env)     # output_dir: a resume's checks, the vocab
    model = make_model(config, family, inputs.start, env, out.latest)
    plan, pacer = plan_run(config, phases, out.latest, started, model, env, forward)   # budget, steps
    opt = build_optimization(config, model, env, plan)       # trainer/build.py

Everything before `join` is checked before any process group exists, so all ranks fail alike
with one TrainError. `resolve` is the one place after the data is read where the config changes:
--doc_attention's default (from the files) and --tokens_per_step's batch sizes (from the rows'
lengths) become one new TrainConfig that the run keeps; the budget's measured max_steps is the
plan's (RunPlan.max_steps), not the config's.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from trainer.build import (
    Inputs,
    build_model,
    check_attention,
    check_inputs,
    describe_objective,
    step_sizes,
)
from trainer.plan import RunPlan
from trainer.runtime.budget import plan_budget
from trainer.runtime.distributed import DistEnv, init_distributed
from trainer.runtime.logs import setup_logging
from trainer.runtime.output_dir import check_resume, copy_vocab, prepare_output_dir
from trainer.start import plan_start

log = logging.getLogger("trainer")


def check(config, family) -> Inputs:
    """The model's start (trainer/start.py) and every phase's data checked against it."""
    return check_inputs(config, family, plan_start(config, family))


def resolve(config, family, inputs: Inputs):
    """(the run's config, its phases, the lines to log): --doc_attention from the shards and
    --tokens_per_step's sizes made one new config, once."""
    attention, note = check_attention(config, family, inputs.all_shards())
    changes, phases, lines = step_sizes(config, inputs.phases, family, inputs.start.model_config)
    return (config.replace(doc_attention=attention, **changes), phases,
            inputs.notes + ([note] if note else []) + lines)


def join(config, family, notes: list[str]) -> DistEnv:
    """The process group (gloo on CPU, nccl on CUDA), logging on rank 0, and the start's lines."""
    env = init_distributed(config.device, force=config.deepspeed)
    setup_logging(env.is_main)
    log.info(config.speed_note)
    for note in notes:
        log.info(note)
    log.info("objective: %s", describe_objective(config, family))
    return env


@dataclass(frozen=True)
class Output:
    path: Path                 # --output_dir
    latest: Path | None        # the checkpoint a resume starts from
    model_config_record: dict  # the model's config as the run starts it (model_config.json's)
    vocab_size: int


def open_output(config, family, start, env) -> Output:
    """--output_dir checked (no other run's checkpoints; a resume's settings are the first
    start's), the tokenizer copied in. The model's config is recorded as the run starts it, before
    a phase sets its RoPE θ on the model (in place; the phases' θ are the plan's to check)."""
    latest = prepare_output_dir(config, env.is_main)
    record = family.config_dict(start.model_config)
    check_resume(latest, Path(config.output_dir), config, env.world_size, record, start.spec)
    env.barrier()
    vocab_size = copy_vocab(start.spec, family.vocab_size(start.model_config), Path(config.output_dir),
                            write=env.is_main)
    return Output(Path(config.output_dir), latest, record, vocab_size)


def make_model(config, family, start, env, latest):
    """The model on the device; phase 2's or --init_from's weights unless resuming."""
    return build_model(config, family, start, env,
                       init_weights=(config.phase == 2 or config.init_from is not None) and latest is None)


def autocast_dtype(config):
    """The autocast of the forward: DeepSpeed converts the model itself; else the precision's."""
    return None if config.deepspeed else {"bf16": torch.bfloat16, "fp16": torch.float16}.get(config.precision)


def plan_run(config, phases, latest, started: float, model, env, forward):
    """(the run's plan: its phases' steps and the lr at each, trainer/plan.py; the budget's pacer
    or None). With --train_budget the steps are planned from timed forward passes (or the
    checkpoint's plan), on the budget's clock `started`, before the schedule is made."""
    if not config.train_budget:
        return RunPlan(phases, config), None
    pacer, starts, max_steps = plan_budget(config, phases, latest, started, model, env, forward)
    starts = starts or list(range(len(phases)))   # resuming: the checkpoint's plan
    return RunPlan(phases, config, starts, end=max_steps), pacer
