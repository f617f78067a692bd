"""Checkpoints: written to a temporary directory and renamed, the last K kept.

Layout (the contract export.py and scripts/demo.py read):

    O/checkpoints/ckpt_{step:08d}/
        model.pt           full model state_dict, Hugging Face names (rank 0)
        meta.json          {"step", "phase", "bert_config", "world_size", "format_version"}
        trainer_state.pt   optimizer, scheduler, grad scaler, loader position, step (rank 0;
                           under DeepSpeed the optimizer and scheduler live in deepspeed/)
        rng_rank{r}.pt     every rank's RNG states (torch, cuda, numpy, python)
        deepspeed/         DeepSpeed's own files (only with --deepspeed)

`is_complete(path)` is the one rule for "this checkpoint can be used": a directory is written
as .tmp_ckpt_* and only gets its ckpt_* name after every rank has written its part, model.pt
and meta.json last; a write that fails on any rank (a full disk...) removes the temporary
folder and raises CheckpointWriteError on every rank alike. `latest_checkpoint(O)` is what
--resume_from_checkpoint continues from;
`read_for_resume` passes over a damaged one (a truncated model.pt) to the one before, with one
warning line, every rank agreeing on which.

Every .pt file is read with torch.load(weights_only=True): tensors and plain Python data only,
so a checkpoint from elsewhere cannot run code. RNG states are saved as tensors and plain types;
RNG files of older checkpoints (numpy's state as a numpy array) load with exactly the numpy
types that state needs allowed. torch is imported on first use: the layout functions
(is_complete, list_checkpoints, checkpoint_step) serve scripts that must not start torch.
"""
from __future__ import annotations

import json
import logging
import random
import re
import shutil
from pathlib import Path

FORMAT_VERSION = 1
CKPT_ROOT = "checkpoints"
DS_TAG = "deepspeed"
TMP_PREFIX = ".tmp_"
_NAME = re.compile(r"^ckpt_(\d{8,})$")
log = logging.getLogger("trainer")


class CheckpointError(ValueError):
    """A checkpoint cannot be used; the message says why and what to do."""


# ---------------------------------------------------------------------------------------------
# Layout


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


# ---------------------------------------------------------------------------------------------
# Safe loading


def _old_numpy_rng_globals() -> list:
    """The numpy types a legacy RNG state (numpy.random.get_state(): a uint32 array) pickles to;
    allowed only while reading rng_rank{r}.pt, and nothing else from numpy."""
    import numpy as np

    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct
    allowed = [np.ndarray, np.dtype,
               (_reconstruct, "numpy._core.multiarray._reconstruct"),  # pickled by numpy >= 2
               (_reconstruct, "numpy.core.multiarray._reconstruct")]   # by numpy 1.x
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        allowed.append(dtypes.UInt32DType)
    return allowed


def load_file(path, extra_globals=(), map_location="cpu"):
    """torch.load(weights_only=True), with one-line CheckpointErrors: a file that holds other
    Python objects (which unpickling could run as code) is refused, never executed."""
    import pickle

    import torch

    path = Path(path)
    try:
        with torch.serialization.safe_globals(list(extra_globals)):
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL (\S+)|but got (<[^>]+>)", str(exc))
        what = f" (it asks for {found.group(1) or found.group(2)})" if found else ""
        raise CheckpointError(f"{path} holds Python objects other than tensors and plain data"
                              f"{what}: refused, as loading it could run code; use a checkpoint "
                              "written by this trainer") from None
    except Exception as exc:  # truncated, not a torch file, unreadable
        first = (str(exc).strip().splitlines() or [""])[0]
        raise CheckpointError(f"cannot read {path} ({type(exc).__name__}: {first}); "
                              "is the checkpoint damaged?") from None


def _deepspeed_globals() -> list:
    """The classes DeepSpeed's own checkpoint files hold besides tensors and plain data (its
    loss scaler, ZeRO stage and fragment records): plain records, allowed by name."""
    from deepspeed.runtime.fp16.loss_scaler import DynamicLossScaler, LossScaler
    from deepspeed.runtime.zero.config import ZeroStageEnum
    from deepspeed.utils.tensor_fragment import fragment_address

    return [LossScaler, DynamicLossScaler, ZeroStageEnum, fragment_address]


def load_deepspeed_checkpoint(engine, ckpt_dir) -> None:
    """engine.load_checkpoint(ckpt_dir/deepspeed), its files read with weights_only=True.

    DeepSpeed's TorchCheckpointEngine would unpickle anything; every file of a checkpoint
    passes through its `load`, which is replaced by ours for this call."""
    ce = engine.checkpoint_engine
    allowed = _deepspeed_globals()
    own = ce.__dict__.get("load")
    ce.load = lambda path, map_location=None: load_file(path, allowed, map_location)
    try:
        engine.load_checkpoint(str(ckpt_dir), tag=DS_TAG)
    finally:
        if own is None:
            del ce.load  # back to the class's method
        else:
            ce.load = own


def load_model_weights(model, path) -> Path:
    """Load a model.pt into `model` (strict: every name must match)."""
    model_file = resolve_model_file(path)
    state = load_file(model_file)
    if not isinstance(state, dict):
        raise CheckpointError(f"{model_file} does not hold a state_dict")
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


# ---------------------------------------------------------------------------------------------
# RNG states


def rng_state() -> dict:
    """Every RNG's state as tensors and plain Python types (loadable with weights_only=True)."""
    import numpy as np
    import torch

    name, keys, pos, has_gauss, cached_gaussian = np.random.get_state(legacy=True)
    state = {"torch": torch.get_rng_state(),
             "numpy": {"name": str(name), "keys": torch.from_numpy(keys.astype(np.int64)),
                       "pos": int(pos), "has_gauss": int(has_gauss),
                       "cached_gaussian": float(cached_gaussian)},
             "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def set_rng_state(state: dict) -> None:
    """Restore rng_state()'s result; also the older format (numpy's own state tuple)."""
    import numpy as np
    import torch

    torch.set_rng_state(state["torch"])
    np_state = state["numpy"]
    if isinstance(np_state, dict):
        np_state = (np_state["name"], np_state["keys"].numpy().astype(np.uint32), np_state["pos"],
                    np_state["has_gauss"], np_state["cached_gaussian"])
    np.random.set_state(np_state)
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


# ---------------------------------------------------------------------------------------------
# Save and load


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
    from trainer.oserrors import as_os_error, os_error_message

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
    if env.is_main:
        for old in list_checkpoints(output_dir)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    env.barrier()
    return final


def load_trainer_state(ckpt_dir, env) -> tuple[dict, dict | None]:
    """(trainer_state, this rank's RNG state or None when the rank did not exist then)."""
    ckpt_dir = Path(ckpt_dir)
    trainer_state = load_file(ckpt_dir / "trainer_state.pt")
    rng_file = ckpt_dir / f"rng_rank{env.rank}.pt"
    rng = load_file(rng_file, _old_numpy_rng_globals()) if rng_file.is_file() else None
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
