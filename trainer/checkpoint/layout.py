"""The checkpoint layout and its one rule for "is it complete"; no torch (scripts read it).

    O/checkpoints/ckpt_{step:08d}/
        model.pt           full model state_dict, Hugging Face names (rank 0)
        meta.json          {"step", "phase", "model_config", "model_type", "max_steps",
                            "world_size", "format_version"}, and "export_class" where the
                           run exports as another class than its family's own (--init_from
                           of a BertModel: "BertForMaskedLM"; older checkpoints lack it);
                           "end_step" (the plan's end then), "budget_s" (a --train_budget
                           run's budget then), "stable": true on the last checkpoint before
                           a wsd schedule's decay (kept by the rotation: --extend starts there)
        trainer_state.pt   optimizer, scheduler, grad scaler, loader position, step (rank 0;
                           under DeepSpeed the optimizer and scheduler live in deepspeed/)
        rng_rank{r}.pt     every rank's RNG states (torch, cuda, numpy, python)
        deepspeed/         DeepSpeed's own files (only with --deepspeed)

`is_complete(path)`: a directory is written as .tmp_ckpt_* and only gets its ckpt_* name after
every rank has written its part, model.pt and meta.json last (trainer/checkpoint/save.py).
`latest_checkpoint(O)` is what --resume_from_checkpoint continues from.

The model's config is "model_config" in meta.json and model_config.json in the run's folder;
runs and checkpoints written before the name was the family's own say "bert_config" and
bert_config.json, and still resume and export: `meta_model_config(meta)`, `model_config_file(run)`.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

FORMAT_VERSION = 1
CKPT_ROOT = "checkpoints"
DS_TAG = "deepspeed"
TMP_PREFIX = ".tmp_"
_NAME = re.compile(r"^ckpt_(\d{8,})$")
STABLE = "stable"                      # meta.json's mark of the last checkpoint before the decay
MODEL_CONFIG = "model_config"          # meta.json's key and the run's model_config.json
MODEL_CONFIG_ALIASES = (MODEL_CONFIG, "bert_config")   # the name first, then the old one


def meta_model_config(meta: dict) -> dict | None:
    """The model's config a checkpoint's meta.json (or a run's hparams.json) records, by either name."""
    found = (meta.get(key) for key in MODEL_CONFIG_ALIASES if isinstance(meta, dict))
    return next((value for value in found if isinstance(value, dict)), None)


def model_config_file(run_dir) -> Path | None:
    """The run's model_config.json (bert_config.json in runs written before), if there is one."""
    found = (Path(run_dir) / f"{key}.json" for key in MODEL_CONFIG_ALIASES)
    return next((p for p in found if p.is_file()), None)


class CheckpointError(ValueError):
    """A checkpoint cannot be used; the message says why and what to do."""


def checkpoint_root(output_dir) -> Path:
    return Path(output_dir) / CKPT_ROOT


def is_complete(path) -> bool:
    """The one "is this checkpoint complete" rule: a directory that is not a temporary
    (.tmp_ckpt_*) one and holds model.pt and meta.json (written last, before the rename)."""
    p = Path(path)
    return (p.is_dir() and not p.name.startswith(TMP_PREFIX)
            and (p / "model.pt").is_file() and (p / "meta.json").is_file())


def checkpoint_step(path) -> int:
    """The step in a ckpt_{step:08d} directory's name."""
    m = _NAME.match(Path(path).name)
    if m is None:
        raise CheckpointError(f"{path} is not named ckpt_{{step:08d}}")
    return int(m.group(1))


def list_checkpoints(output_dir) -> list[Path]:
    """Complete checkpoints under output_dir/checkpoints, oldest first."""
    root = checkpoint_root(output_dir)
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir()
             if (m := _NAME.match(p.name)) and is_complete(p)]
    return [p for _, p in sorted(found)]


def stable_checkpoint(output_dir) -> Path | None:
    """The newest complete checkpoint written just before the lr began to decay (meta.json's
    "stable"): where --extend continues a run from, and what the rotation keeps."""
    for path in reversed(list_checkpoints(output_dir)):
        try:
            if read_meta(path).get(STABLE):
                return path
        except CheckpointError:
            continue
    return None


def latest_checkpoint(output_dir) -> Path | None:
    found = list_checkpoints(output_dir)
    return found[-1] if found else None


def read_meta(ckpt_dir) -> dict:
    path = Path(ckpt_dir) / "meta.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{ckpt_dir} is not a complete checkpoint ({exc})") from None
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{ckpt_dir}: checkpoint format {meta.get('format_version')} is not "
                              f"{FORMAT_VERSION}; it was written by another trainer version")
    return meta


def resolve_model_file(path) -> Path:
    """--init_checkpoint: an output_dir (its newest checkpoint), a ckpt_* dir or a model.pt."""
    p = Path(path)
    if p.is_file():
        return p
    if (p / "model.pt").is_file():
        return p / "model.pt"
    latest = latest_checkpoint(p)
    if latest is not None:
        return latest / "model.pt"
    raise CheckpointError(f"--init_checkpoint {path}: no model.pt there and no complete checkpoint "
                          "under its checkpoints/ folder; give the phase-1 output_dir or a ckpt_* dir")
