"""Optimisers and the learning-rate schedule for BERT pretraining.

    from trainer.schedule.optim import build_optimizer, build_scheduler
    opt = build_optimizer(model, "lamb", lr=6e-3, weight_decay=0.01)
    sched = build_scheduler(opt, warmup_proportion=0.2843, max_steps=7038)   # kind="poly"
    sched = build_scheduler(opt, 0.05, 7038, kind="wsd", decay_proportion=0.2)
    ...; opt.step(); sched.step()

`Lamb` is NVIDIA apex's FusedLAMB written with torch._foreach_* ops (no apex, any device):
Adam moments with bias correction, decoupled weight decay added to the update, then a per-tensor
trust ratio ||w|| / ||update|| (1 when either norm is 0). Like FusedLAMB's default
(use_nvlamb=False), the trust ratio applies only to tensors with weight decay; biases and
LayerNorm (no decay) take the plain Adam step. FusedLAMB's own clipping by the global grad norm
is left out: the trainer calls clip_grad_norm_ itself. AdamW is torch.optim.AdamW (foreach).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from trainer.config.options.optimizer import SCHEDULES  # the one list: the flag's choices, each's degree


class Lamb(torch.optim.Optimizer):
    """LAMB (You et al. 2019) as NVIDIA's FusedLAMB computes it; see the module docstring."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-6,
                 weight_decay: float = 0.01):
        if lr < 0.0:
            raise ValueError(f"Lamb: learning rate must be >= 0, got {lr}")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Lamb: betas must be in [0, 1), got {betas}")
        if eps < 0.0 or weight_decay < 0.0:
            raise ValueError("Lamb: eps and weight_decay must be >= 0")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        groups = []
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if params:
                groups.append((group, params))
        if not groups:
            return loss

        for group, params in groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            grads, exp_avgs, exp_avg_sqs = [], [], []
            for p in params:
                if p.grad.is_sparse:
                    raise RuntimeError("Lamb does not support sparse gradients")
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                grads.append(p.grad)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
            # One step count per group, as apex keeps it (saved with the param groups).
            group["step"] = step = group.get("step", 0) + 1

            # m = b1 m + (1-b1) g ;  v = b2 v + (1-b2) g^2
            torch._foreach_lerp_(exp_avgs, grads, 1.0 - beta1)
            torch._foreach_mul_(exp_avg_sqs, beta2)
            torch._foreach_addcmul_(exp_avg_sqs, grads, grads, value=1.0 - beta2)

            # update = (m / bc1) / (sqrt(v / bc2) + eps) + wd * w   (few passes over memory)
            bc1 = 1.0 - beta1 ** step
            bc2 = 1.0 - beta2 ** step
            denom = torch._foreach_sqrt(exp_avg_sqs)
            torch._foreach_div_(denom, math.sqrt(bc2))
            torch._foreach_add_(denom, eps)
            if wd == 0:
                # no trust ratio (FusedLAMB's default for undecayed tensors): plain Adam step
                torch._foreach_addcdiv_(params, exp_avgs, denom, value=-lr / bc1)
                continue
            update = torch._foreach_mul(params, wd)
            torch._foreach_addcdiv_(update, exp_avgs, denom, value=1.0 / bc1)
            # trust ratio ||w|| / ||update||, 1 when either is 0; computed on device, no sync
            w_norm = torch.stack(torch._foreach_norm(params))
            u_norm = torch.stack(torch._foreach_norm(update))
            ratio = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm,
                                torch.ones_like(w_norm))
            torch._foreach_mul_(update, list((ratio * -lr).unbind()))
            torch._foreach_add_(params, update)
        return loss


def _no_decay(name: str, param: nn.Parameter) -> bool:
    """Biases and LayerNorm parameters get no weight decay (BERT's rule)."""
    return param.ndim < 2 or "LayerNorm" in name or name.endswith(".bias")


def param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    decay, no_decay = [], []
    for name, p in model.named_parameters():     # shared (tied) tensors are listed once
        if p.requires_grad:
            (no_decay if _no_decay(name, p) else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def build_optimizer(model: nn.Module, name: str, lr: float, weight_decay: float = 0.01,
                    betas=(0.9, 0.999), eps: float = 1e-6):
    """`name` is "lamb" or "adamw"; no weight decay on biases and LayerNorm."""
    groups = param_groups(model, weight_decay)
    key = name.lower()
    if key == "lamb":
        return Lamb(groups, lr=lr, betas=betas, eps=eps)
    if key == "adamw":
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, foreach=True)
    raise ValueError(f"unknown optimizer {name!r}: choose lamb or adamw")


def lr_factor(step: int, warmup_steps: float, max_steps: int, degree: float = 0.5) -> float:
    """Multiplier of the peak lr at `step`: linear warmup from 0, then (1 - progress)^degree
    over the steps after warmup, reaching 0 at max_steps (and staying 0 after). Progress is
    measured from the end of warmup, so the lr is continuous there (NVIDIA's
    PolyWarmUpScheduler measures it over all max_steps and drops the lr abruptly at the end of
    warmup, to 0.85x for warmup 0.2843)."""
    if step < warmup_steps:
        return step / warmup_steps
    if step >= max_steps:
        return 0.0
    return ((max_steps - step) / (max_steps - warmup_steps)) ** degree


def linear_factor(step: int, warmup_steps: float, max_steps: int) -> float:
    """Linear warmup, then linear decay to 0 at max_steps."""
    return lr_factor(step, warmup_steps, max_steps, degree=1.0)


def wsd_factor(step: int, warmup_steps: float, max_steps: int, decay_steps: float) -> float:
    """Warmup-stable-decay (ModernBERT, MiniCPM): linear warmup, the peak until the last
    `decay_steps`, then linear to 0 at max_steps."""
    if step < warmup_steps:
        return step / warmup_steps
    if step >= max_steps:
        return 0.0
    decay_start = max_steps - decay_steps
    if step < decay_start:
        return 1.0
    return (max_steps - step) / decay_steps


class LrShape:
    """The schedule's multiplier of the peak lr at a step, as one decaying segment that a re-plan
    (trainer/runtime/pacing.py) can move: linear warmup over `warmup` steps (fixed once planned),
    then 1.0 until `anchor`, then `anchor_factor * ((end - step) / span) ** degree`, 0 from `end`.

    Planned for `end` steps it is exactly lr_factor (poly, linear: the segment starts at the end of
    warmup) or wsd_factor (the segment is the last `decay_proportion` of the steps). `replan(t, E)`
    moves the end to E at step t and keeps the lr continuous: before the decay, wsd's decay start
    moves with the end (the last decay_proportion of the new E; at once when that is already
    past) and poly/linear stretch their decay; inside the decay, the segment restarts at t from
    the factor it had reached (for poly and linear this is the same curve when E is unchanged).
    Plain attributes only: saved as they are in a checkpoint (weights_only)."""

    def __init__(self, kind: str, warmup: float, end: int, decay_proportion: float = 0.2):
        if kind not in SCHEDULES:
            raise ValueError(f"unknown lr schedule {kind!r}: choose one of {', '.join(SCHEDULES)}")
        self.kind, self.degree = kind, SCHEDULES[kind]
        self.warmup, self.end = float(warmup), int(end)
        self.decay_proportion = float(decay_proportion)
        self.anchor_factor = 1.0
        if kind == "wsd":
            self.span = max(1.0, self.decay_proportion * self.end)
            self.anchor = self.end - self.span
        else:
            self.anchor, self.span = self.warmup, self.end - self.warmup

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return step / self.warmup
        if step >= self.end:
            return 0.0
        if step < self.anchor:
            return 1.0
        x = (self.end - step) / self.span
        return self.anchor_factor * (x if self.degree == 1.0 else x ** self.degree)

    def replan(self, step: int, end: int) -> None:
        """The run now ends at `end` (> step); see the class docstring."""
        end = int(end)
        if end <= step:
            raise ValueError(f"a re-plan at step {step} must end after it, got {end}")
        now = self(step)
        if step < self.anchor:   # not decaying yet
            start = (end - max(1.0, self.decay_proportion * end)) if self.kind == "wsd" else self.anchor
            start = max(start, self.warmup)
            if step <= start < end:
                self.end, self.anchor, self.anchor_factor, self.span = end, start, 1.0, end - start
                return
        # the decay starts now, from where the lr is (inside the warmup too: the ramp stops here)
        self.warmup = min(self.warmup, float(step))
        self.end, self.anchor, self.anchor_factor, self.span = end, float(step), now, float(end - step)

    def extend(self, step: int, end: int) -> None:
        """--extend: a run stopped in its stable phase (at `step`, warmup done, the lr not yet
        decayed) now ends at `end`: the stable phase goes on, the decay is the last
        decay_proportion of the new end (wsd) or from `step` if that is already past; the warmup
        is not redone."""
        end = int(end)
        if end <= step:
            raise ValueError(f"an extension from step {step} must end after it, got {end}")
        start = (end - max(1.0, self.decay_proportion * end)) if self.kind == "wsd" else float(step)
        self.end, self.anchor, self.anchor_factor = end, max(float(step), start, self.warmup), 1.0
        self.span = float(end) - self.anchor

    def state_dict(self) -> dict:
        return dict(vars(self))

    def load_state_dict(self, state: dict) -> None:
        vars(self).update(state)


def build_scheduler(optimizer, warmup_proportion: float, max_steps: int, kind: str = "poly",
                    decay_proportion: float = 0.2, factor=None):
    """LambdaLR: linear warmup over warmup_proportion * max_steps, then `kind`: poly (degree 0.5
    as NVIDIA's PolyWarmUpScheduler) to 0 at max_steps, continuous at the end of warmup (see
    lr_factor); linear to 0; or wsd (stable, then linear to 0 over the last
    decay_proportion * max_steps). `factor`: the multiplier of the peak lr at a step, given
    instead (the run's plan, trainer/schedule/plan.py, which phases and re-plans change)."""
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    if not 0.0 <= warmup_proportion < 1.0:
        raise ValueError(f"warmup_proportion must be in [0, 1), got {warmup_proportion}")
    if factor is None:   # an object of plain attributes: LambdaLR saves and restores them
        factor = LrShape(kind, warmup_proportion * max_steps, max_steps, decay_proportion)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
