"""Reading checkpoint files safely, and the RNG states a checkpoint keeps.

    state = load_file(path)               # torch.load(weights_only=True), one-line CheckpointError
    load_model_weights(model, init_checkpoint)    # --phase2's weights, strictly
    load_deepspeed_checkpoint(engine, ckpt_dir)   # DeepSpeed's files through load_file
    rng_state(); set_rng_state(state)

Every .pt file is read with torch.load(weights_only=True): tensors and plain Python data only,
so a checkpoint from elsewhere cannot run code. RNG states are saved as tensors and plain types;
RNG files of older checkpoints (numpy's state as a numpy array) load with exactly the numpy
types that state needs allowed.
"""
from __future__ import annotations

import pickle
import random
import re
from pathlib import Path

from trainer.checkpoint.layout import DS_TAG, CheckpointError, resolve_model_file


def old_numpy_rng_globals() -> list:
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
                              f"unexpected {unexpected[:3]}): use the same --model_config as phase 1")
    for name, t in state.items():
        if ours[name].shape != t.shape:
            raise CheckpointError(f"{model_file}: {name} is {tuple(t.shape)}, the model wants "
                                  f"{tuple(ours[name].shape)}; use the same --model_config as phase 1")
    model.load_state_dict(state)
    return model_file


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
