"""The fine-tuning loop: AdamW with linear warmup and decay, batches padded to their longest
row, bf16 autocast on CUDA (fp32 on CPU), and prediction in length order.

Usage:
    stats = train(model, feats.rows, LoopSettings(epochs=3), seed=1, device=pick_device())
    outputs = predict(model, feats.rows, device=device)   # {"logits": [array per row], ...}

The sample order is a function of the seed alone (a torch.Generator), so one seed gives one
run. Rows are lists of ids (features.py, qa.py); padding uses the tokenizer's pad id. A model
gets only the inputs its forward names (`accepted`): segment ids go to BERT, not to a
ModernBERT or a DistilBERT, which have none.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from trainer.finetune.progress import progress
from trainer.finetune.textfiles import FinetuneDataError

PAD_VALUES = {"labels": -100}   # other sequences pad with 0, input_ids with the pad id


@dataclass
class LoopSettings:
    epochs: float = 3.0
    learning_rate: float = 5e-5
    batch_size: int = 32
    eval_batch_size: int = 128
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0


def pick_device(name: str | None = None):
    """--device as a torch.device: the pretrainer's rule (trainer/runtime/distributed.py: cuda
    when present; cuda asked of a machine without one is one line), "cuda:1" taken as it is."""
    import torch  # lazy, as everywhere in this module: torch loads when a run starts

    from trainer.runtime.distributed import resolve_device

    try:
        return torch.device(resolve_device(name or None))
    except ValueError as exc:
        raise FinetuneDataError(str(exc)) from None


def accepted(model) -> set[str]:
    """The inputs `model`'s forward names (input_ids, attention_mask, token_type_ids, labels,
    ...): a batch keeps only those (its **kwargs take anything, and use none of our keys)."""
    import inspect

    params = inspect.signature(model.forward).parameters.values()
    return {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def collate(rows: list[dict], pad_id: int):
    """Tensors of one batch: sequences padded to the longest row, attention mask added."""
    import torch

    width = max(len(r["input_ids"]) for r in rows)
    batch = {}
    for key, value in rows[0].items():
        if isinstance(value, list):
            pad = pad_id if key == "input_ids" else PAD_VALUES.get(key, 0)
            arr = np.full((len(rows), width), pad, dtype=np.int64)
            for i, r in enumerate(rows):
                arr[i, :len(r[key])] = r[key]
            batch[key] = torch.from_numpy(arr)
        else:
            batch[key] = torch.tensor([r[key] for r in rows], dtype=torch.long)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        mask[i, :len(r["input_ids"])] = 1
    batch["attention_mask"] = torch.from_numpy(mask)
    return batch


def _optimizer(model, settings: LoopSettings):
    import torch

    decay, no_decay = [], []
    for _name, p in model.named_parameters():
        if p.requires_grad:
            # no weight decay on biases and LayerNorm weights (BERT's and HF's rule)
            (no_decay if p.ndim < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": settings.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=settings.learning_rate)


def _autocast(device):
    import torch

    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast(device.type, enabled=False)


def train(model, rows: list[dict], settings: LoopSettings, *, seed: int, device, pad_id: int,
          desc: str = "fine-tune") -> dict:
    """Fine-tune `model` in place; returns {"steps", "seconds", "examples_per_s", "loss"}."""
    import torch

    if not rows:
        raise ValueError("no training rows")
    model.to(device).train()
    per_epoch = math.ceil(len(rows) / settings.batch_size)
    total = max(1, math.ceil(per_epoch * settings.epochs))
    warmup = int(total * settings.warmup_ratio)
    opt = _optimizer(model, settings)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warmup) if s < warmup
        else max(0.0, (total - s) / max(1, total - warmup)))
    gen = torch.Generator().manual_seed(seed)
    takes = accepted(model)
    step, seen, loss_sum, loss_n = 0, 0, 0.0, 0
    start = time.perf_counter()
    bar = progress(total=total, desc=desc, unit="step")
    while step < total:
        order = torch.randperm(len(rows), generator=gen).tolist()
        for b in range(0, len(order), settings.batch_size):
            if step >= total:
                break
            batch = {k: v.to(device, non_blocking=True) for k, v in
                     collate([rows[i] for i in order[b:b + settings.batch_size]], pad_id).items()
                     if k in takes}
            with _autocast(device):
                loss = model(**batch).loss
            loss.backward()
            if settings.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            seen += batch["input_ids"].shape[0]
            if step % 10 == 0 or step == total:   # a host sync now and then, not every step
                value = float(loss.detach())
                loss_sum, loss_n = loss_sum + value, loss_n + 1
                bar.set_postfix(loss=f"{value:.3f}", refresh=False)
            bar.update(1)
    bar.close()
    seconds = time.perf_counter() - start
    return {"steps": step, "seconds": round(seconds, 3),
            "examples_per_s": round(seen / seconds, 2) if seconds > 0 else None,
            "loss": round(loss_sum / loss_n, 5) if loss_n else None}


def predict(model, rows: list[dict], *, device, pad_id: int, batch_size: int = 128,
            outputs: tuple[str, ...] = ("logits",)) -> dict[str, list[np.ndarray]]:
    """Model outputs per row, in row order: token-level outputs cut to the row's length.
    Rows run longest first, so batches hold rows of similar length (less padding)."""
    import torch

    model.to(device).eval()
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i]["input_ids"]))
    result: dict[str, list] = {name: [None] * len(rows) for name in outputs}
    inputs = [k for k in ("input_ids", "token_type_ids") if k in rows[0] and k in accepted(model)] \
        if rows else []
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            idx = order[b:b + batch_size]
            batch = collate([{k: rows[i][k] for k in inputs} for i in idx], pad_id)
            batch = {k: v.to(device) for k, v in batch.items()}
            with _autocast(device):
                out = model(**batch)
            for name in outputs:
                values = getattr(out, name).float().cpu().numpy()
                per_token = values.ndim == 3 or name != "logits"   # start/end logits are per piece
                for j, i in enumerate(idx):
                    n = len(rows[i]["input_ids"])
                    result[name][i] = values[j, :n] if per_token else values[j]
    return result
