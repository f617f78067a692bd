"""The DeepSpeed rules: how a --deepspeed_config and the trainer's flags become one setting.

    ds = deepspeed_settings(args, precision, device)   # DeepSpeedSettings; TrainError if they clash
    ds.config, ds.precision, ds.train_batch_size, ds.gradient_accumulation_steps
    warning = lamb_zero_warning(ds.config, args.optimizer)                 # None when LAMB is exact
    disable_ds_shm_comm()                                                  # WIKI2BERT_DS_SHM=0

Not named deepspeed.py: run_pretraining.py runs by path, and a module of that name beside it
would shadow the deepspeed package.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from common.numbers import plural
from trainer.errors import TrainError

# WIKI2BERT_DS_SHM=0: skip DeepSpeed's CPU shared-memory all-reduce op (see disable_ds_shm_comm)
DS_SHM_ENV = "WIKI2BERT_DS_SHM"


@dataclass(frozen=True)
class DeepSpeedSettings:
    """What a --deepspeed_config and the flags settle: DeepSpeed's config as it is handed to
    deepspeed.initialize, the precision, and the micro-batch and accumulation it implies."""
    config: dict
    precision: str
    train_batch_size: int              # per rank and micro-step
    gradient_accumulation_steps: int


def reconcile_global_batch(micro: int, accum: int, global_batch: int, fixed: set, path,
                           world_size: int) -> tuple[int, int]:
    """A DeepSpeed config's global train_batch_size = micro-batch x accumulation x ranks.

    DeepSpeed's own rule: the settings given (in its config or as our flags/config file) stay,
    the missing one is derived; with neither given, accumulation is 1. Anything that does not
    divide evenly is one clear error instead of DeepSpeed's assertion. Returns (micro-batch,
    accumulation)."""
    what = (f"{path} sets train_batch_size {global_batch} (global: micro-batch per rank x "
            f"gradient_accumulation_steps x {plural(world_size, 'rank')})")
    if {"train_batch_size", "gradient_accumulation_steps"} <= fixed:
        if micro * accum * world_size != global_batch:
            raise TrainError(f"{what}, but the micro-batch {micro} x accumulation {accum} x "
                             f"{world_size} = {micro * accum * world_size}: drop train_batch_size "
                             "there or one of --train_batch_size/--gradient_accumulation_steps")
        return
    if "train_batch_size" in fixed:
        accum, rest = divmod(global_batch, micro * world_size)
        name = f"micro-batch {micro}"
    else:
        micro, rest = divmod(global_batch, accum * world_size)
        name = f"gradient_accumulation_steps {accum}"
    if rest or min(micro, accum) < 1:
        raise TrainError(f"{what}, which is not a multiple of {name} x {plural(world_size, 'rank')}: "
                         "change train_batch_size there or the flags")
    return micro, accum


def lamb_zero_warning(ds: dict, optimizer: str) -> str | None:
    """Our LAMB under ZeRO stage >= 1 sees flat partitions, not the model's tensors.

    DeepSpeed's ZeRO-1/2 hand the optimizer one flattened fp32 partition per param group and
    rank (DeepSpeed issue #490), so LAMB's per-tensor trust ratio ||w||/||update|| becomes one
    ratio per partition: a different optimizer from LAMB, whose results depend on the world
    size. Stage 0 (also with bf16) keeps the tensors and is exact LAMB."""
    stage = int((ds.get("zero_optimization") or {}).get("stage", 0) or 0)
    if optimizer != "lamb" or "optimizer" in ds or stage < 1:
        return None
    return (f"LAMB under ZeRO stage {stage}: DeepSpeed gives the optimizer flattened partitions, "
            "so the trust ratio is per partition, not per tensor (DeepSpeed #490); for exact LAMB "
            "use ZeRO stage 0 or no --deepspeed, or use --optimizer adamw (unaffected)")


def deepspeed_settings(args, precision: str, device: str,
                       world_size: int | None = None) -> DeepSpeedSettings:
    """Read the DeepSpeed config; its batch and precision settings win, conflicts are errors.
    `args` (the parsed flags) is only read."""
    path = args.deepspeed_config
    if world_size is None:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    try:
        with open(path, encoding="utf-8") as fh:
            ds = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise TrainError(f"--deepspeed_config {path}: cannot read it ({exc})") from None
    if not isinstance(ds, dict):
        raise TrainError(f"--deepspeed_config {path}: expected a JSON object")
    explicit = set(args.explicit)
    fixed = set()  # which of ours the DeepSpeed config or the user set
    batch = {"train_batch_size": args.train_batch_size,
             "gradient_accumulation_steps": args.gradient_accumulation_steps}
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        value = ds.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TrainError(f"{path}: {key} must be a positive integer, got {value!r}")
    for ours, theirs in (("train_batch_size", "train_micro_batch_size_per_gpu"),
                         ("gradient_accumulation_steps", "gradient_accumulation_steps")):
        if theirs in ds:
            if ours in explicit and getattr(args, ours) != ds[theirs]:
                raise TrainError(f"--{ours} {getattr(args, ours)} conflicts with {theirs} "
                                 f"{ds[theirs]} in {path}: drop one (the DeepSpeed config wins)")
            batch[ours] = int(ds[theirs])
            fixed.add(ours)
        elif ours in explicit:
            fixed.add(ours)
    micro, accum = batch["train_batch_size"], batch["gradient_accumulation_steps"]
    if "train_batch_size" in ds:
        micro, accum = reconcile_global_batch(micro, accum, int(ds["train_batch_size"]), fixed, path,
                                              world_size)
    ds["train_micro_batch_size_per_gpu"] = micro
    ds["gradient_accumulation_steps"] = accum
    ds_prec = ("fp16" if ds.get("fp16", {}).get("enabled") else
               "bf16" if ds.get("bf16", ds.get("bfloat16", {})).get("enabled") else None)
    if ds_prec is not None:
        if "precision" in explicit and args.precision != ds_prec:
            raise TrainError(f"--precision {args.precision} conflicts with {path}, which enables "
                             f"{ds_prec}: drop one (the DeepSpeed config wins)")
        precision = ds_prec
    elif "precision" in explicit or precision != "fp32":
        if precision in ("bf16", "fp16"):
            ds[precision] = {"enabled": True}
    if precision == "fp16" and device != "cuda":
        raise TrainError(f"{path} asks for fp16, which DeepSpeed supports on CUDA only: "
                         "use bf16 or fp32 on CPU")
    opt = ds.get("optimizer", {}).get("type", "")
    if opt and device != "cuda" and opt.lower() in ("lamb", "onebitlamb", "fusedlamb"):
        raise TrainError(f"{path} names DeepSpeed's {opt} optimizer, a CUDA-only fused kernel: "
                         "remove the \"optimizer\" block to use the trainer's own LAMB")
    if not opt:  # ours is passed in; ZeRO wants to be told that is intended
        ds.setdefault("zero_allow_untested_optimizer", True)
    ds.setdefault("gradient_clipping", args.max_grad_norm)
    ds.setdefault("steps_per_print", 10 ** 9)  # we log ourselves
    return DeepSpeedSettings(ds, precision, micro, accum)


def shm_comm_disabled() -> bool:
    """WIKI2BERT_DS_SHM=0 asks for plain gloo instead of DeepSpeed's shm all-reduce op."""
    return os.environ.get(DS_SHM_ENV) == "0"


# DeepSpeed's shm op builds in 1-3.5 min; where the lock's holder cannot be looked up (no /proc,
# another user's processes), a lock older than this was left by a killed build
STALE_BUILD_LOCK_S = 15 * 60


def lock_holder_alive(lock: Path) -> bool | None:
    """Whether a live process of ours holds `lock` open (torch's FileBaton keeps the fd of the
    lock it created open while it builds; the build cache is the user's own, so other users'
    processes, whose fds we may not read, are not asked); None where /proc cannot tell."""
    target, unknown, uid = str(lock), False, os.getuid()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except FileNotFoundError:
            continue
        except OSError:
            unknown = True
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
            except OSError:
                continue
    return None if unknown else False


def clear_stale_shm_build_lock(now: float | None = None) -> str | None:
    """Remove the lock file a killed build of DeepSpeed's shm_comm op left behind, or every later
    start waits on it forever (torch's FileBaton records no owner): stale when no process holds
    it open, or, where that cannot be seen, when older than STALE_BUILD_LOCK_S. Returns the log line."""
    from torch.utils.cpp_extension import _get_build_directory  # private, but the one source of the path

    lock = Path(_get_build_directory("deepspeed_shm_comm", verbose=False)).resolve() / "lock"
    try:
        age = (time.time() if now is None else now) - lock.stat().st_mtime
    except FileNotFoundError:
        return None
    alive = lock_holder_alive(lock)
    if alive or (alive is None and age < STALE_BUILD_LOCK_S):
        return None
    lock.unlink(missing_ok=True)
    return (f"removed {lock}, left {age / 60:.0f} min ago by an interrupted build of DeepSpeed's "
            "shm_comm op (it is rebuilt now)")


def disable_ds_shm_comm() -> None:
    """Skip DeepSpeed's CPU shared-memory all-reduce op, whose first use compiles C++ (~1-2 min).

    Gloo is used instead. No environment variable of DeepSpeed avoids the build (DS_BUILD_*
    only concern pre-building), so this edits its cached op-compatibility table; opt in with
    WIKI2BERT_DS_SHM=0 (the tests do, but for one run that checks the default build)."""
    import deepspeed.ops

    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
