"""The run's one config: the parsed flags with every default and check resolved once, frozen.

    config = resolve_config(parse_args(argv))   # TrainConfig; ConfigError / TrainError in one line
    config.device, config.precision             # "cpu" / "cuda"; "fp32" / "bf16" / "fp16"
    config.torch_compile, config.unpad          # the speed defaults (trainer/runtime/speed.py)
    config.train_batch_size                     # reconciled with a --deepspeed_config
    config = config.replace(max_steps=n)        # the budget's measured max_steps, a new config
    config.to_dict()                            # hparams.json

Resolved here, before anything runs: the device and precision, the DeepSpeed batch and
precision (trainer/runtime/ds_settings.py), compile and unpadding, the model family's objective
(a family without a next-sentence head trains masked LM only: --no_nsp is implied), the
evaluation batch size, the phase.
Checks that need the data (packed rows with NSP, sequence length against the model, a vocab
for dynamic masking) are made by trainer/build.py before the process group exists.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TrainConfig:
    # -- model and data (the flags of trainer/config/flags.py, same names) ----------------
    bert_config: str
    model_type: str
    vocab_file: str | None
    input_dir: str
    output_dir: str
    # -- objective and masking
    masking: str
    mlm_probability: float
    whole_word_masking: bool
    mask_replace_prob: float
    random_replace_prob: float
    no_nsp: bool
    # -- optimisation
    train_batch_size: int              # per rank and micro-step (DeepSpeed's config may set it)
    gradient_accumulation_steps: int
    learning_rate: float
    warmup_proportion: float
    max_steps: int                     # the budget's measured count with --train_budget
    train_budget: str | None
    lr_schedule: str
    decay_proportion: float
    steps_this_run: int | None
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
    # -- what the user set (not defaults) and what was derived
    explicit: tuple[str, ...] = ()
    deepspeed_settings: dict | None = field(default=None)   # handed to deepspeed.initialize
    speed_note: str = ""               # which speed options and why, in one line (logged)

    @property
    def phase(self) -> int:
        return 2 if self.phase2 else 1

    def replace(self, **changes) -> TrainConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """hparams.json's keys: every field (the DeepSpeed settings as handed to DeepSpeed)."""
        d = dataclasses.asdict(self)
        d["explicit"] = list(self.explicit)
        return d


FLAG_FIELDS = tuple(f.name for f in dataclasses.fields(TrainConfig)
                    if f.name not in ("explicit", "deepspeed_settings", "speed_note"))


def resolve_config(args) -> TrainConfig:
    """The frozen TrainConfig of the parsed (and checked) flags `args`; see the module doc."""
    from trainer.errors import TrainError
    from trainer.models import get_family
    from trainer.runtime.distributed import resolve_device
    from trainer.runtime.ds_settings import deepspeed_settings
    from trainer.runtime.speed import resolve_speed_options

    family = get_family(args.model_type)
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
    ds = None
    if args.deepspeed:
        ds = deepspeed_settings(args, precision, device)
        precision = ds.precision
        flags.update(train_batch_size=ds.train_batch_size,
                     gradient_accumulation_steps=ds.gradient_accumulation_steps)
    torch_compile, unpad, note = resolve_speed_options(args, device, precision, family)
    flags.update(device=device, precision=precision, torch_compile=torch_compile, unpad=unpad,
                 eval_batch_size=args.eval_batch_size or flags["train_batch_size"])
    return TrainConfig(**flags, explicit=tuple(args.explicit), speed_note=note,
                       deepspeed_settings=ds.config if ds is not None else None)

