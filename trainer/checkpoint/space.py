"""How many bytes a checkpoint takes, and whether the output disk holds what the run will write.

    per_rank = checkpoint_bytes(model, optimizer, engine, env)   # this rank's part of a checkpoint
    check_run_space(config, out, env, per_rank)     # at start: --keep_checkpoints + 1 checkpoints + logs
    check_checkpoint_space(out, step, env, per_rank)    # before each checkpoint: one more

The size is the tensors' bytes as torch.save writes them (model.pt in fp32, the optimizer's
state, every rank's RNG, the loader position) plus the zip and pickle records around each
tensor: cheap (no serialization), never below the written size and at most 15% above it
(tests/trainer/checkpoint/test_checkpoint.py compares them; the faults:
tests/trainer/test_disk_faults.py).
Before the first step an Adam-type optimizer holds no state yet: it is counted as the two
moments per parameter it will hold. Under DeepSpeed each rank counts its own ZeRO partition.
All ranks agree on the verdict (one all-reduce), so they stop together with one `Error:` line.
"""
from __future__ import annotations

import torch

from common.numbers import plural
from common.os_errors import DiskSpaceError, check_free_space, free_bytes, human
from trainer.checkpoint.files import rng_state
from trainer.checkpoint.layout import latest_checkpoint, list_checkpoints
from trainer.errors import TrainError

PER_TENSOR = 320         # a tensor's zip records (headers, 64-byte alignment), pickle entry
PER_FILE = 8 << 10       # a file's zip directory and pickled plain data (RNG: python's ~6 KiB)
LOG_BYTES_PER_RECORD = 1024   # train_log.jsonl and TensorBoard, per logged step
LOG_MARGIN = 1 << 20     # hparams.json, vocab.txt, git_diff.patch ...
MOMENTS = 2              # AdamW and LAMB keep exp_avg and exp_avg_sq per parameter


def tensor_bytes(obj, seen: set | None = None) -> int:
    """Bytes of the tensors in a nest of dicts/lists/tuples as torch.save writes them (each
    storage once, whole) plus PER_TENSOR for each."""
    seen = set() if seen is None else seen
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        key = (obj.device, storage.data_ptr())
        if key in seen:
            return 0
        seen.add(key)
        return storage.nbytes() + PER_TENSOR
    if isinstance(obj, dict):
        return sum(tensor_bytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v, seen) for v in obj)
    return 0


def model_file_bytes(model) -> int:
    """model.pt: every floating tensor in fp32 (save.py's model_state), the rest as they are."""
    total, seen = PER_FILE, set()
    for v in model.state_dict().values():
        if v.is_floating_point() and v.dtype != torch.float32:
            total += v.numel() * 4 + PER_TENSOR    # .float() makes a new tensor
        else:
            total += tensor_bytes(v, seen)
    return total


def optimizer_bytes(optimizer) -> int:
    """The optimizer's saved state; before its first step, the moments it will hold."""
    if any(optimizer.state.values()):
        return tensor_bytes(optimizer.state_dict()["state"]) + PER_FILE
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
    return sum(MOMENTS * (p.numel() * 4 + PER_TENSOR) + PER_TENSOR for p in params) + PER_FILE


def checkpoint_bytes(model, optimizer, engine, env) -> int:
    """The bytes of this rank's part of a checkpoint (rank 0 also writes model.pt and the
    trainer state; under DeepSpeed every rank writes its partition of the optimizer)."""
    own = tensor_bytes(rng_state()) + PER_FILE
    if engine is not None:
        try:   # DeepSpeed's ZeRO optimizer: this rank's partition (fp32 weights and moments)
            own += tensor_bytes(engine.optimizer.state_dict()) + PER_FILE
        except Exception:   # noqa: BLE001  an optimizer DeepSpeed wraps otherwise: its moments + weights
            n = sum(p.numel() for p in model.parameters())
            own += (MOMENTS + 1) * 4 * n // env.world_size
        if env.is_main:   # DeepSpeed's copy of the module weights
            own += tensor_bytes(engine.module.state_dict()) + PER_FILE
    if env.is_main:
        own += model_file_bytes(model) + PER_FILE   # + trainer_state.pt's plain data
        if engine is None:
            own += optimizer_bytes(optimizer)
    return own


def _agree(out, env, per_rank: int, need_fn) -> tuple[int, int, bool]:
    """(a checkpoint's bytes summed over ranks, the bytes needed, whether some rank's output
    disk lacks them): every rank takes part, so all stop together."""
    total = int(env.all_reduce_sum(torch.tensor([float(per_rank)], dtype=torch.float64,
                                                device=env.device)).item())
    need = need_fn(total)
    short = float(free_bytes(out) < need)
    flag = env.all_reduce_sum(torch.tensor([short], dtype=torch.float64, device=env.device))
    return total, need, flag.item() > 0


def _refuse(out, need: int, what: str, first: str = "", then: str = "") -> None:
    try:
        check_free_space(out, need, what, also=", or lower --keep_checkpoints")
    except DiskSpaceError as exc:
        raise TrainError(f"{first}{exc}{then}") from None
    raise TrainError(f"{first}another rank's output disk lacks room for {what} ({human(need)}){then}")


def check_run_space(config, out, env, per_rank: int, max_steps: int | None = None) -> None:
    """At start: room for --keep_checkpoints + 1 checkpoints (the newest is written before the
    oldest goes; with wsd one more, the last before the decay, kept for --extend) and the logs of
    `max_steps` steps (the plan's; default --max_steps), less the checkpoints the output_dir
    already holds."""
    held = len(list_checkpoints(out))
    steps = config.max_steps if max_steps is None else max_steps
    records = steps // max(config.log_every, 1) + (steps // config.eval_every if config.eval_every else 0)
    stable = int(config.lr_schedule == "wsd")
    count = max(config.keep_checkpoints + 1 + stable - held, 1)
    logs = LOG_MARGIN + LOG_BYTES_PER_RECORD * records
    size, need, short = _agree(out, env, per_rank, lambda b: count * b + logs)
    if short:
        _refuse(out, need, f"{plural(count, 'more checkpoint')} of {human(size)} (--keep_checkpoints "
                f"{config.keep_checkpoints}, + 1 while the next is written"
                f"{', + 1 before the decay' if stable else ''}) and the logs")


def check_checkpoint_space(out, step: int, env, per_rank: int) -> None:
    """Before a checkpoint: room for it (something else may have filled the disk). Short of
    it, the run stops before writing anything, its newest complete checkpoint untouched."""
    size, need, short = _agree(out, env, per_rank, lambda b: b + LOG_MARGIN)
    if short:
        newest = latest_checkpoint(out)
        kept = f"{newest.name} is kept" if newest is not None else "no checkpoint was written"
        _refuse(out, need, f"checkpoint ckpt_{step:08d} and the logs",
                first=f"stopped at step {step} before writing its checkpoint: ",
                then=f"; {kept}: rerun with --resume_from_checkpoint once there is room")
