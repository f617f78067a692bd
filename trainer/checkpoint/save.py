"""Writing a checkpoint (a temporary directory, then renamed; the last K kept) and reading the
newest one every rank can read for --resume_from_checkpoint.

    save_checkpoint(output_dir, step, env, meta=..., model_state_fn=..., trainer_state=..., keep=3)
    ckpt, meta, state, rng, weights = read_for_resume(latest_checkpoint(output_dir), env)

A write that fails on any rank (a full disk...) removes the temporary folder and raises
CheckpointWriteError on every rank alike; `read_for_resume` passes over a damaged checkpoint (a
truncated model.pt) to the one before, with one warning line, every rank agreeing on which.
"""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from common.os_errors import as_os_error, os_error_message
from trainer.checkpoint.files import load_file, old_numpy_rng_globals, rng_state
from trainer.checkpoint.layout import (
    DS_TAG,
    FORMAT_VERSION,
    TMP_PREFIX,
    CheckpointError,
    checkpoint_root,
    checkpoint_step,
    latest_checkpoint,
    list_checkpoints,
    read_meta,
    stable_checkpoint,
)

log = logging.getLogger("trainer")


class CheckpointWriteError(CheckpointError):
    """A checkpoint could not be written (disk full, read-only, ...): nothing half-written is
    left, the newest complete checkpoint is untouched; every rank raises it alike."""


def _agreed(env, failure: str | None, tmp: Path) -> None:
    """Every rank learns whether any rank failed (replaces a barrier). On a failure the
    temporary folder goes and every rank raises the first failing rank's message."""
    import torch.distributed as dist

    said = [failure]
    if env.active:
        said = [None] * env.world_size
        dist.all_gather_object(said, failure)
    first = next(((r, m) for r, m in enumerate(said) if m is not None), None)
    if first is None:
        return
    if env.is_main:
        shutil.rmtree(tmp, ignore_errors=True)
    env.barrier()   # the folder is gone before any rank reports
    rank, message = first
    raise CheckpointWriteError(message if rank == 0 else f"rank {rank}: {message}")


def _failure(exc: BaseException, path: Path, tmp: Path, output_dir) -> str:
    """The one line for a write that failed on `path`: an OS fault in words, anything else
    as its type and first line."""
    exc = as_os_error(exc, path)
    newest = latest_checkpoint(output_dir)
    kept = f"{newest.name} is kept" if newest is not None else "no earlier checkpoint exists"
    if isinstance(exc, OSError):
        what = os_error_message(exc, path, also=", or lower --keep_checkpoints")
    else:
        what = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
    return (f"checkpoint {tmp.name[len(TMP_PREFIX):]} not written ({what}); {kept}: rerun with "
            "--resume_from_checkpoint once fixed")


def save_checkpoint(output_dir, step: int, env, *, meta: dict, model_state_fn,
                    trainer_state: dict, keep: int, ds_engine=None) -> Path:
    """Every rank calls this. `model_state_fn()` (rank 0) returns the full model state_dict.
    A write that fails on any rank (full disk, read-only, ...) removes the temporary folder
    and raises CheckpointWriteError on every rank; earlier checkpoints stay as they were."""
    import torch

    root = checkpoint_root(output_dir)
    final = root / f"ckpt_{step:08d}"
    tmp = root / f"{TMP_PREFIX}ckpt_{step:08d}"
    path, failure = tmp, None

    def save(obj, name):
        nonlocal path
        path = tmp / name
        torch.save(obj, path)

    try:
        if env.is_main:
            root.mkdir(parents=True, exist_ok=True)
            if tmp.exists():
                shutil.rmtree(tmp)  # left by a run killed while saving
            tmp.mkdir()
    except Exception as exc:  # noqa: BLE001  every rank must hear of it, not wait at a barrier
        failure = _failure(exc, path, tmp, output_dir)
    _agreed(env, failure, tmp)
    try:
        if ds_engine is not None:
            path = tmp / DS_TAG
            ds_engine.save_checkpoint(str(tmp), tag=DS_TAG, client_state={"trainer": trainer_state},
                                      save_latest=False)
        save(rng_state(), f"rng_rank{env.rank}.pt")
    except Exception as exc:  # noqa: BLE001
        failure = _failure(exc, path, tmp, output_dir)
    _agreed(env, failure, tmp)  # model_state_fn may read the DeepSpeed files all ranks just wrote
    try:
        if env.is_main:
            save(model_state_fn(tmp), "model.pt")
            save(trainer_state, "trainer_state.pt")
            path = tmp / "meta.json"
            path.write_text(json.dumps(
                {**meta, "step": step, "world_size": env.world_size, "format_version": FORMAT_VERSION},
                indent=2) + "\n", encoding="utf-8")
            if final.exists():
                shutil.rmtree(final)
            path = final
            tmp.rename(final)
    except Exception as exc:  # noqa: BLE001
        failure = _failure(exc, path, tmp, output_dir)
    _agreed(env, failure, tmp)
    if env.is_main:   # the last `keep`, and the one before the decay (--extend starts there)
        stable = stable_checkpoint(output_dir)
        for old in list_checkpoints(output_dir)[:-keep]:
            if old != stable:
                shutil.rmtree(old, ignore_errors=True)
    env.barrier()
    return final


def drop_checkpoints_after(output_dir, step: int, env) -> list[str]:
    """Remove the checkpoints after `step` (rank 0; every rank waits): --extend continues from an
    earlier one, and a resume must never go back to the old run's later steps. Their names."""
    later = [p for p in list_checkpoints(output_dir) if checkpoint_step(p) > step]
    if env.is_main:
        for path in later:
            shutil.rmtree(path, ignore_errors=True)
    env.barrier()
    return [p.name for p in later]


def model_state(model, engine, precision: str, tmp_dir) -> dict:
    """model.pt's tensors: every floating one in fp32 (under DeepSpeed in bf16/fp16, the fp32
    master weights of the ZeRO files just written to `tmp_dir`), the rest as they are."""
    import torch

    if engine is not None and precision != "fp32":
        try:  # the fp32 master weights, not the bf16 working copy
            from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint
            sd = get_fp32_state_dict_from_zero_checkpoint(str(tmp_dir), tag=DS_TAG)
            return {k: sd.get(k, v).detach().float().cpu() if torch.is_floating_point(v) else v.cpu()
                    for k, v in model.state_dict().items()}
        except Exception as exc:  # noqa: BLE001  e.g. ZeRO stage 0: no partitioned fp32 files
            log.warning("model.pt from the %s module weights (%s)", precision, exc)
    return {k: (v.detach().float() if torch.is_floating_point(v) else v).cpu()
            for k, v in model.state_dict().items()}


def load_trainer_state(ckpt_dir, env) -> tuple[dict, dict | None]:
    """(trainer_state, this rank's RNG state or None when the rank did not exist then)."""
    ckpt_dir = Path(ckpt_dir)
    trainer_state = load_file(ckpt_dir / "trainer_state.pt")
    rng_file = ckpt_dir / f"rng_rank{env.rank}.pt"
    rng = load_file(rng_file, old_numpy_rng_globals()) if rng_file.is_file() else None
    return trainer_state, rng


def _read_all(ckpt_dir, env) -> tuple:
    """Every file of a checkpoint this rank needs, read: (meta, trainer_state, rng, weights)."""
    meta = read_meta(ckpt_dir)
    state, rng = load_trainer_state(ckpt_dir, env)
    weights = load_file(Path(ckpt_dir) / "model.pt")
    if not isinstance(weights, dict):
        raise CheckpointError(f"{ckpt_dir}/model.pt does not hold a state_dict")
    return meta, state, rng, weights


def read_for_resume(newest, env) -> tuple:
    """(ckpt_dir, meta, trainer_state, rng, weights) of the newest checkpoint, from `newest`
    down, that every rank can read. A damaged one (a file cut short by a full disk or a lost
    node) costs one warning line and the steps since the one before; all ranks take the same."""
    import torch

    candidates = [p for p in list_checkpoints(Path(newest).parent.parent)
                  if checkpoint_step(p) <= checkpoint_step(newest)][::-1] or [Path(newest)]
    for i, ckpt in enumerate(candidates):
        error = None
        try:
            found = _read_all(ckpt, env)
        except CheckpointError as exc:
            error = str(exc)
        failed = env.all_reduce_sum(torch.tensor([float(error is not None)], device=env.device))
        if failed.item() == 0:
            return (ckpt, *found)
        why = error or "another rank could not read its part"
        if i + 1 == len(candidates):
            raise CheckpointError(f"{why}; no older complete checkpoint to resume from: start a "
                                  "new --output_dir, or remove the damaged checkpoint")
        if env.is_main:
            log.warning("%s is damaged (%s): resuming from the previous complete checkpoint %s",
                        ckpt.name, why, candidates[i + 1].name)
    raise AssertionError("unreachable")
