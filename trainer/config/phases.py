"""Sequence-length phases (--phases FILE, or a "phases" list in --config_file): one run goes
through rows of several lengths (128 -> 1,024 -> 8,192), each phase with its own data and
settings, under one learning-rate schedule and one --train_budget (docs/training.md: Phases).
Read and checked here, without data or torch; their steps are planned by trainer/schedule/plan.py.

    phases = parse_phases(value, source="--phases F", base=Path("."))   # (Phase, ...); ConfigError
    phase.thetas                                                        # {"global_rope_theta": 160000.0}

A phase is an object: `input_dir` and `share` (of the steps, or of --train_budget's time), and
optionally `seq_len` (checked against the data), `train_batch_size`, `mlm_probability` (with
--masking dynamic), `learning_rate` (the phase's peak), and the RoPE θ its family takes:
`rope_theta` (BERT-style RoPE families) or `global_rope_theta` / `local_rope_theta`
(ModernBERT). A setting a phase leaves out is the run's flag (θ: the phase before's, else the
model config's). A file holds the list, or an object whose "phases" key holds it (beside
"_comment" keys). A relative input_dir is looked up beside the file first, then in the working
directory. The shares must be positive and sum to 1 (within 0.001; they are then normalised).
"""
from __future__ import annotations

import difflib
import math
import os
from dataclasses import dataclass, fields
from pathlib import Path

from trainer.config.errors import ConfigError, read_json

THETA_KEYS = ("rope_theta", "global_rope_theta", "local_rope_theta")
SHARE_ROUNDING = 1e-3


@dataclass(frozen=True)
class Phase:
    input_dir: str
    share: float
    seq_len: int | None = None
    train_batch_size: int | None = None
    mlm_probability: float | None = None
    learning_rate: float | None = None
    rope_theta: float | None = None
    global_rope_theta: float | None = None
    local_rope_theta: float | None = None

    @property
    def thetas(self) -> dict[str, float]:
        """The RoPE θ this phase sets, by key."""
        return {k: getattr(self, k) for k in THETA_KEYS if getattr(self, k) is not None}


KEYS = tuple(f.name for f in fields(Phase))
INTS = ("seq_len", "train_batch_size")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _one(d, i: int, source: str, base: Path | None) -> Phase:
    where = f"{source}: phase {i + 1}"
    if not isinstance(d, dict):
        raise ConfigError(f"{where} is {d!r}: each phase is an object with input_dir and share")
    for key in d:
        if key.startswith("_"):
            continue
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.7)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{where} has an unknown key {key!r}; {hint}a phase takes "
                              f"{', '.join(KEYS)}")
    for key in ("input_dir", "share"):
        if key not in d:
            raise ConfigError(f"{where} has no {key!r}: every phase needs input_dir and share")
    folder = d["input_dir"]
    if isinstance(folder, (dict, list)):
        raise ConfigError(f"{where}: input_dir must be one folder (several languages in a phase "
                          "are not supported yet: run one language per phase list)")
    if not isinstance(folder, str) or not folder:
        raise ConfigError(f"{where}: input_dir must be a folder, got {folder!r}")
    if base is not None and not os.path.isabs(folder) and (base / folder).exists():
        folder = str(base / folder)
    values = {k: d[k] for k in KEYS if k in d and not k.startswith("_")}
    values["input_dir"] = folder
    for key, value in values.items():
        if key == "input_dir":
            continue
        if key in INTS:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where}: {key} must be an integer >= 1, got {value!r}")
        elif not _number(value) or value <= 0:
            raise ConfigError(f"{where}: {key} must be a number > 0, got {value!r}")
    if "mlm_probability" in values and not values["mlm_probability"] < 1:
        raise ConfigError(f"{where}: mlm_probability must be in (0, 1), got {values['mlm_probability']}")
    return Phase(**{k: float(v) if k not in INTS and k != "input_dir" else v for k, v in values.items()})


def read_phases_file(path: str) -> tuple[list, Path]:
    """(the phase list, the file's folder) of a --phases file."""
    value = read_json(path, "--phases", ": give a JSON file that lists the phases")
    if isinstance(value, dict) and "phases" in value:
        value = value["phases"]
    return value, Path(path).resolve().parent


def parse_phases(value, source: str = "--phases", base: Path | None = None) -> tuple[Phase, ...] | None:
    """The phases of a --phases value: None, a file name (read), or a list of phase objects
    (relative input_dir looked up under `base` first); checked, shares normalised."""
    if value is None:
        return None
    if isinstance(value, tuple) and all(isinstance(p, Phase) for p in value):
        return value
    if isinstance(value, (str, os.PathLike)):
        source = f"--phases {value}"
        value, base = read_phases_file(str(value))
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{source}: expected a non-empty JSON list of phases, each an object "
                          'with input_dir and share, e.g. [{"input_dir": "D128", "share": 0.9}, '
                          '{"input_dir": "D1024", "share": 0.1}]')
    phases = [_one(d, i, source, base) for i, d in enumerate(value)]
    total = sum(p.share for p in phases)
    if abs(total - 1.0) > SHARE_ROUNDING:
        said = " + ".join(f"{p.share:g}" for p in phases)
        raise ConfigError(f"{source}: the phases' shares {said} sum to {total:g}, not 1: give each "
                          "phase its share of the steps (or of --train_budget's time)")
    return tuple(Phase(**{**vars(p), "share": p.share / total}) for p in phases)


def check_phase_settings(phases, masking: str, deepspeed: bool) -> None:
    """What the other flags rule out: a phase's masking rate with static masks, its batch size
    under DeepSpeed (whose config fixes the micro-batch)."""
    for i, p in enumerate(phases):
        if p.mlm_probability is not None and masking != "dynamic":
            raise ConfigError(f"phase {i + 1} sets mlm_probability, which applies to --masking dynamic; "
                              "the static masks come from `pipeline encode` (its --masked-lm-prob)")
        if p.train_batch_size is not None and deepspeed:
            raise ConfigError(f"phase {i + 1} sets train_batch_size, but under --deepspeed its config "
                              "fixes the micro-batch: leave it out of the phases")


def check_phase_family(phases, family) -> None:
    """θ a family cannot take is one line: a family without RoPE takes none; ModernBERT takes
    global_rope_theta / local_rope_theta; a BERT-style RoPE family rope_theta."""
    for i, p in enumerate(phases):
        for key in p.thetas:
            check_theta(family, key, f"phase {i + 1} sets {key}")


def check_theta(family, key: str, said: str) -> None:
    """One ConfigError when `family` does not take the θ `key` (`said`: where it was given)."""
    if key in family.rope_keys:
        return
    if not family.rope_keys:
        raise ConfigError(f"{said}, but {family.display_name} has no rotary position embeddings (RoPE) "
                          "to set θ for: leave it out")
    raise ConfigError(f"{said}; {family.display_name} takes {' / '.join(family.rope_keys)}")
