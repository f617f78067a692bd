"""The run's one config: the parsed flags with every default and check resolved once, frozen.

    config = resolve_config(parse_args(argv))   # TrainConfig; ConfigError / TrainError in one line
    config.device, config.precision             # "cpu" / "cuda"; "fp32" / "bf16" / "fp16"
    config.languages                            # {code: folder} with --input_dir LANG=DIR, else {}
    config.torch_compile, config.unpad          # the speed defaults (trainer/runtime/speed.py)
    config.train_batch_size                     # reconciled with a --deepspeed_config
    config.to_dict()                            # hparams.json

Resolved here, before anything runs: the model family (--model_type, or --init_from's folder
or run, or a transformers config.json's model_type: trainer/config/init_from.py), the device
and precision, the DeepSpeed batch and precision (trainer/runtime/ds_settings.py), compile and
unpadding, the model family's objective (a family without a next-sentence head trains masked LM
only: --no_nsp is implied; so does --init_from of weights without one), the vocabulary
(--init_from's own unless --vocab_file is given), the evaluation batch size, the phase.
Checks that need the data (packed rows with NSP, sequence length against the model, a vocab
for dynamic masking) are made by trainer/start/parts.py before the process group exists; so is
--doc_attention's default, which depends on the files (resolve_doc_attention, here): the
Trainer's start (trainer/start/steps.py: resolve) makes it and the step sizes of --tokens_per_step
one new config, once, after the data is read; nothing changes it after that.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from trainer.config.encoded_rate import encoded_rate, rate_note
from trainer.config.errors import ConfigError
from trainer.config.init_from import open_init_source
from trainer.config.phases import check_phase_family, check_theta
from trainer.config.positions import flag_thetas
from trainer.errors import TrainError
from trainer.models import family_of_config, get_family
from trainer.runtime.ds_settings import deepspeed_settings
from trainer.runtime.speed import resolve_speed_options


@dataclass(frozen=True)
class TrainConfig:
    # -- model and data (the flags of trainer/config/options/, same names) ----------------
    model_config: str | None           # None with --init_from (its config.json / meta.json)
    model_type: str                    # resolved: --model_type, or the family of --init_from's or
                                       # of a transformers config.json's model_type
    init_from: str | None
    new_token_init: str                # a new vocabulary's new rows: "pieces" (mean) or "random"
    vocab_file: str | None             # resolved: --init_from's own tokenizer when not given
    input_dir: str | dict | None        # one folder, or {language code: folder} sorted by code;
                                        # None with --phases (each phase has its own)
    phases: tuple | None                # --phases: (trainer.config.phases.Phase, ...), shares normalised
    sampling_alpha: str                 # with several languages: the exponent or its schedule
    output_dir: str
    # -- objective and masking
    masking: str
    mlm_probability: float
    whole_word_masking: bool
    mask_replace_prob: float
    random_replace_prob: float
    no_nsp: bool
    doc_attention: str | None          # the flag, then resolved from the data by trainer/start/parts.py
                                       # (resolve_doc_attention): "within" / "across" documents of
                                       # packed rows, None for rows of sentence pairs
    # -- optimisation
    train_batch_size: int              # per rank and micro-step (DeepSpeed's config may set it)
    gradient_accumulation_steps: int   # with tokens_per_step: the first phase's (trainer/start/parts.py)
    learning_rate: float
    warmup_proportion: float
    max_steps: int                     # the flag; with --train_budget the plan measures its own
                                       # (trainer/schedule/plan.py: RunPlan.max_steps, hparams.json's)
    train_budget: str | None
    budget_replan: bool                # with train_budget: re-plan when the pace drifts
    lr_schedule: str
    decay_proportion: float
    steps_this_run: int | None
    extend: bool                       # continue past the planned end from the checkpoint before the decay
    optimizer: str
    weight_decay: float
    max_grad_norm: float
    precision: str                     # resolved: fp32 / bf16 / fp16
    seed: int
    # -- speed (resolved)
    torch_compile: bool
    unpad: bool
    # -- run
    device: str                        # resolved: cpu / cuda
    log_every: int
    eval_every: int
    eval_batch_size: int               # resolved: train_batch_size when not given
    eval_max_samples: int
    checkpoint_every: int
    keep_checkpoints: int
    resume_from_checkpoint: bool
    phase2: bool
    init_checkpoint: str | None
    tensorboard: bool
    deepspeed: bool
    deepspeed_config: str | None
    local_rank: int | None
    config_file: str | None
    # -- longer rows for a model that exists (trainer/config/positions.py)
    max_position_embeddings: int | None = None   # beside --init_from: its learned table extended
    rope_theta: float | None = None              # RoPE θ of the model config, where given
    global_rope_theta: float | None = None
    local_rope_theta: float | None = None
    # -- a step in tokens (trainer/config/step_size.py): train_batch_size and
    # gradient_accumulation_steps become its first phase's, each phase's in hparams' phase_plan
    tokens_per_step: int | None = None
    # -- what the user set (not defaults) and what was derived
    explicit: tuple[str, ...] = ()
    deepspeed_settings: dict | None = field(default=None)   # handed to deepspeed.initialize
    speed_note: str = ""               # which speed options and why, in one line (logged)
    masking_note: str = ""             # the masking rate taken from the data, in one line (logged)
    init_source: object = field(default=None, compare=False, repr=False)   # --init_from, opened once

    @property
    def languages(self) -> dict[str, str]:
        """{code: folder} of a run on several languages (--input_dir LANG=DIR); {} for one folder."""
        return dict(self.input_dir) if isinstance(self.input_dir, dict) else {}

    @property
    def bert_config(self) -> str | None:
        """The old name of model_config."""
        return self.model_config

    @property
    def unpadded_rows(self) -> bool:
        """The encoder runs on the real tokens: --unpad, or attention within documents."""
        return self.unpad or self.doc_attention == "within"

    @property
    def phase(self) -> int:
        return 2 if self.phase2 else 1

    def replace(self, **changes) -> TrainConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """hparams.json's keys: every field (the DeepSpeed settings as handed to DeepSpeed)."""
        d = dataclasses.asdict(dataclasses.replace(self, init_source=None))
        del d["init_source"]
        d["explicit"] = list(self.explicit)
        return d


def resolve_model_type(args, source) -> str:
    """The family: --init_from's (a --model_type that contradicts it is one line), else
    --model_type when given, else a transformers config.json's model_type, else the default."""
    given = args.model_type if "model_type" in args.explicit else None
    if source is not None:
        if given is not None and given != source.model_type:
            raise ConfigError(f"--model_type {given} contradicts --init_from {source.path}, a "
                              f"{source.model_type} model: leave out --model_type")
        return source.model_type
    if given is not None:
        return given
    try:
        with open(args.model_config, encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, ValueError, TypeError):
        return args.model_type   # the model JSON's own errors come when it is read
    if not isinstance(d, dict) or "model_type" not in d:
        return args.model_type
    try:
        return family_of_config(d, f"--model_config {args.model_config}")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


FLAG_FIELDS = tuple(f.name for f in dataclasses.fields(TrainConfig)
                    if f.name not in ("explicit", "deepspeed_settings", "speed_note", "masking_note",
                                   "init_source"))


def resolve_doc_attention(config: TrainConfig, family, packed: bool, marked: bool) -> tuple[str | None, str | None]:
    """(--doc_attention resolved from the data, the one line that says so or None): within
    documents where the packed files mark where they start (`marked`) and the family can, else
    across; None for rows of sentence pairs. `within` asked for data without the
    marks is one ConfigError."""
    given = config.doc_attention
    if given == "within" and not (packed and marked):
        what = "packed rows that do not mark" if packed else "rows of sentence pairs, which do not mark"
        raise ConfigError(f"--doc_attention within: --input_dir holds {what} where documents start "
                          "(the doc_starts dataset): re-encode with `pipeline encode --pack`, or pass "
                          "--doc_attention across")
    if given == "within" and not family.unpads:
        raise ConfigError(f"--doc_attention within: the {family.display_name} family has no "
                          "attention within documents: pass --doc_attention across")
    if not packed:
        return None, None
    if given is None and marked and family.unpads:
        return "within", (
            "doc_attention within: each document of a packed row attends only to itself (the files "
            "mark where documents start; --doc_attention across attends across the whole row)")
    if given is None:
        why = (f"the {family.display_name} family has no attention within documents" if marked else
               "the packed files do not mark where documents start: re-encode with "
               "`pipeline encode --pack` for attention within each document")
        return "across", f"doc_attention across: {why}"
    return given, (f"doc_attention {given} (asked): " + (
        "each document of a packed row attends only to itself" if given == "within"
        else "attention crosses from one document into the next in a packed row"))


def resolve_config(args) -> TrainConfig:
    """The frozen TrainConfig of the parsed (and checked) flags `args`; see the module doc."""
    from trainer.runtime.distributed import resolve_device  # torch: trainer/config stays torch-free (--help)

    source = open_init_source(args.init_from) if args.init_from else None
    family = get_family(resolve_model_type(args, source))
    if args.phases:   # θ the family cannot take
        check_phase_family(args.phases, family)
    for key in flag_thetas(args):
        check_theta(family, key, f"--{key} is given")
    try:
        device = resolve_device(args.device)
    except ValueError as exc:  # e.g. --device cuda without a GPU
        raise TrainError(str(exc)) from None
    precision = args.precision or ("bf16" if device == "cuda" else "fp32")
    if precision == "fp16" and device != "cuda" and not args.deepspeed:
        raise TrainError("--precision fp16 needs CUDA (loss scaling on GPU): use fp32 or bf16 on CPU")
    flags = {name: getattr(args, name) for name in FLAG_FIELDS}
    if not family.has_nsp:   # masked LM only is the family's one objective: --no_nsp is implied
        flags["no_nsp"] = True
    flags["model_type"] = family.name
    if args.extend:   # a continuation is a resume
        flags["resume_from_checkpoint"] = True
    masking_note = ""
    if args.masking == "dynamic" and "mlm_probability" not in args.explicit and not args.phases:
        found = encoded_rate(args.input_dir)   # the data's rate, not 0.15 (trainer/config/encoded_rate.py)
        if found is not None:
            flags["mlm_probability"], masking_note = found[0], rate_note(found)
    if source is not None:
        if not family.exports_nsp(source.export_class):   # weights without a next-sentence head
            flags["no_nsp"] = True
        if not args.vocab_file and source.tokenizer is not None:
            flags["vocab_file"] = str(source.tokenizer)
    ds = None
    if args.deepspeed:
        ds = deepspeed_settings(args, precision, device)
        precision = ds.precision
        flags.update(train_batch_size=ds.train_batch_size,
                     gradient_accumulation_steps=ds.gradient_accumulation_steps)
    torch_compile, unpad, note = resolve_speed_options(args, device, precision, family)
    flags.update(device=device, precision=precision, torch_compile=torch_compile, unpad=unpad,
                 eval_batch_size=args.eval_batch_size or flags["train_batch_size"])
    return TrainConfig(**flags, explicit=tuple(args.explicit), speed_note=note, masking_note=masking_note,
                       deepspeed_settings=ds.config if ds is not None else None, init_source=source)

