"""The run's start, one step a function, in the order Trainer.__init__ (trainer/loop.py) calls them.

    inputs = check(config, family)                           # the data against the model and tokenizer
    config, phases, notes = resolve(config, family, inputs)  # the config, once, with the data's answers
    env = join(config, family, notes)                        # the process group; logging
    out = open_output(config, family, inputs.start, env)     # output_dir: a resume's checks, the vocab
    model = make_model(config, family, inputs.start, env, out.latest)
    plan, pacer = plan_run(config, phases, out.latest, started, model, env, forward)   # budget, steps
    opt = build_optimization(config, model, env, plan)       # trainer/start/parts.py

Everything before `join` is checked before any process group exists, so all ranks fail alike
with one TrainError. `resolve` is the one place after the data is read where the config changes:
--doc_attention's default (from the files) and --tokens_per_step's batch sizes (from the rows'
lengths) become one new TrainConfig that the run keeps; the budget's measured max_steps is the
plan's (RunPlan.max_steps), not the config's.

The check, in its parts (below the steps): --phase2's checkpoint, each phase's shards, the model's
positions fitted to the longest rows (trainer/start/longer_rows.py first), the data's tokenizer against
the run's (trainer/start/origin.py), packed rows only with --no_nsp, each phase's dynamic masker.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from trainer.checkpoint.layout import CheckpointError, resolve_model_file
from trainer.config.errors import ConfigError
from trainer.config.resolved import resolve_doc_attention
from trainer.data.masking import MaskingError, build_masker
from trainer.data.mixture import combined_shards, find_languages
from trainer.data.shards import DataError, Shards, find_shards
from trainer.data.vocabulary import data_tokenizer
from trainer.errors import TrainError
from trainer.runtime.budget import plan_budget
from trainer.runtime.distributed import DistEnv, init_distributed
from trainer.runtime.logs import setup_logging
from trainer.runtime.output_dir import check_resume, copy_vocab, prepare_output_dir
from trainer.schedule.plan import RunPhase, RunPlan
from trainer.start.longer_rows import extend_start
from trainer.start.origin import check_data_tokenizer, plan_start
from trainer.start.parts import build_model, describe_objective, step_sizes

log = logging.getLogger("trainer")


def check(config, family) -> Inputs:
    """The model's start (trainer/start/origin.py) and every phase's data checked against it."""
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
    """(the run's plan: its phases' steps and the lr at each, trainer/schedule/plan.py; the budget's pacer
    or None). With --train_budget the steps are planned from timed forward passes (or the
    checkpoint's plan), on the budget's clock `started`, before the schedule is made."""
    if not config.train_budget:
        return RunPlan(phases, config), None
    pacer, starts, max_steps = plan_budget(config, phases, latest, started, model, env, forward)
    starts = starts or list(range(len(phases)))   # resuming: the checkpoint's plan
    return RunPlan(phases, config, starts, end=max_steps), pacer


# -- the check, in its parts --------------------------------------------------------------------
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
    """(start, notes): the model config extended as the flags ask (trainer/start/longer_rows.py), then
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


def check_attention(config, family, shards):
    """(--doc_attention resolved from the shards, the log line saying which):
    within documents where the packed files mark them (trainer/config/resolved.py); one
    TrainError where `within` was asked of files that cannot have it."""
    try:
        return resolve_doc_attention(config, family, shards.packed, shards.doc_starts)
    except ConfigError as exc:
        raise TrainError(str(exc)) from None


def _packed_folder(config, languages) -> str:
    packed = [lang for lang in languages if lang.shards.packed]
    return f"{packed[0].code}={packed[0].input_dir}" if packed else str(config.input_dir)
