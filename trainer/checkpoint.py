"""Checkpoints: written to a temporary directory and renamed, the last K kept.

Layout (the contract export.py reads):

    O/checkpoints/ckpt_{step:08d}/
        model.pt           full model state_dict, Hugging Face names (rank 0)
        meta.json          {"step", "phase", "bert_config", "world_size", "format_version"}
        trainer_state.pt   optimizer, scheduler, grad scaler, loader position, step (rank 0;
                           under DeepSpeed the optimizer and scheduler live in deepspeed/)
        rng_rank{r}.pt     every rank's RNG states (torch, cuda, numpy, python)
        deepspeed/         DeepSpeed's own files (only with --deepspeed)

A directory named ckpt_* is complete: it only gets that name after every rank has written
its part. `latest_checkpoint(O)` is what --resume_from_checkpoint continues from.
"""
from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import numpy as np
import torch

FORMAT_VERSION = 1
CKPT_ROOT = "checkpoints"
DS_TAG = "deepspeed"
_NAME = re.compile(r"^ckpt_(\d{8,})$")


class CheckpointError(ValueError):
    """A checkpoint cannot be used; the message says why and what to do."""


def checkpoint_root(output_dir) -> Path:
    return Path(output_dir) / CKPT_ROOT


def list_checkpoints(output_dir) -> list[Path]:
    """Complete checkpoints under output_dir/checkpoints, oldest first."""
    root = checkpoint_root(output_dir)
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir()
             if (m := _NAME.match(p.name)) and (p / "meta.json").is_file()]
    return [p for _, p in sorted(found)]


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


def load_model_weights(model: torch.nn.Module, path) -> Path:
    """Load a model.pt into `model` (strict: every name must match)."""
    model_file = resolve_model_file(path)
    state = torch.load(model_file, map_location="cpu", weights_only=True)
    ours = model.state_dict()
    missing = [k for k in ours if k not in state]
    unexpected = [k for k in state if k not in ours]
    if missing or unexpected:
        raise CheckpointError(f"{model_file} does not fit the model (missing {missing[:3]}, "
                              f"unexpected {unexpected[:3]}): use the same --bert_config as phase 1")
    for name, t in state.items():
        if ours[name].shape != t.shape:
            raise CheckpointError(f"{model_file}: {name} is {tuple(t.shape)}, the model wants "
                                  f"{tuple(ours[name].shape)}; use the same --bert_config as phase 1")
    model.load_state_dict(state)
    return model_file


def rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
             "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


def save_checkpoint(output_dir, step: int, env, *, meta: dict, model_state_fn,
                    trainer_state: dict, keep: int, ds_engine=None) -> Path:
    """Every rank calls this. `model_state_fn()` (rank 0) returns the full model state_dict."""
    root = checkpoint_root(output_dir)
    final = root / f"ckpt_{step:08d}"
    tmp = root / f".tmp_ckpt_{step:08d}"
    if env.is_main:
        root.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)  # left by a run killed while saving
        tmp.mkdir()
    env.barrier()
    if ds_engine is not None:
        ds_engine.save_checkpoint(str(tmp), tag=DS_TAG, client_state={"trainer": trainer_state},
                                  save_latest=False)
    torch.save(rng_state(), tmp / f"rng_rank{env.rank}.pt")
    env.barrier()  # model_state_fn may read the DeepSpeed files all ranks just wrote
    if env.is_main:
        torch.save(model_state_fn(tmp), tmp / "model.pt")
        torch.save(trainer_state, tmp / "trainer_state.pt")
        (tmp / "meta.json").write_text(json.dumps(
            {**meta, "step": step, "world_size": env.world_size, "format_version": FORMAT_VERSION},
            indent=2) + "\n", encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
        for old in list_checkpoints(output_dir)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    env.barrier()
    return final


def load_trainer_state(ckpt_dir, env) -> tuple[dict, dict | None]:
    """(trainer_state, this rank's RNG state or None when the rank did not exist then)."""
    ckpt_dir = Path(ckpt_dir)
    trainer_state = torch.load(ckpt_dir / "trainer_state.pt", map_location="cpu", weights_only=False)
    rng_file = ckpt_dir / f"rng_rank{env.rank}.pt"
    rng = torch.load(rng_file, map_location="cpu", weights_only=False) if rng_file.is_file() else None
    return trainer_state, rng
