"""What the card did, in the run's record: real tokens/s, model TFLOP/s and MFU, peak memory and,
on CUDA, the GPU's busy share, for each logging window (train_log.jsonl's step records, the eval
line) and each phase (the same figures as `phase_*` keys in the phase's last step record, and a
log line; the model card and report.html read them).

    meter = CardMeter(model_config, device, precision, world_size)
    batch = meter.count(host_batch)     # each micro-batch, on the host (no GPU sync); and the
                                        # GPU's busy share sampled (at most 2 a second)
    meter.closing = True                # the next window is a phase's (or the run's) last
    record.update(meter.window(seconds, k))  # at a log step: the window's figures (and the
                                             # phase's when closing); a new window

- tokens_per_sec: the real (non-padding) tokens this rank trained on, times the ranks, a second;
- tflops: model FLOPs (trainer/runtime/flops.py: ModernBERT's formula for a config with local
  attention, BERT's otherwise) a second, all ranks; mfu: a GPU's share of its card's
  peak dense bf16/fp16 FLOP/s (PEAK_TFLOPS by name), null on the CPU, in fp32 and on a card not
  in the table;
- peak_memory_gib: on CUDA the most the allocator held since the phase began
  (max_memory_allocated); on the CPU the process's peak resident memory so far (ru_maxrss: it
  cannot be reset, so a later phase's is at least an earlier one's);
- gpu_busy: the mean of torch.cuda.utilization() (NVML: the share of the last sample period in
  which a kernel ran), sampled as micro-batches are fetched (at most every SAMPLE_EVERY_S) over
  the window, in percent; null on the CPU or without NVML (pynvml).
"""
from __future__ import annotations

import logging
import resource
import time

import numpy as np
import torch

from trainer.runtime.flops import modernbert_train_flops, train_flops

# dense bf16/fp16 tensor-core peaks (TFLOP/s, without sparsity) by a part of the card's name,
# the first that matches: NVIDIA's data sheets
PEAK_TFLOPS = (("H100 PCIe", 756.0), ("H100", 989.0), ("H200", 989.0), ("GH200", 989.0),
               ("B200", 2250.0), ("A100", 312.0), ("L40S", 362.0), ("L40", 181.0), ("L4", 121.0), ("A10", 125.0),
               ("4090", 165.0), ("V100", 125.0))
SAMPLE_EVERY_S = 0.5   # the GPU's busy share: NVML averages over its own period (1/6 s to 1 s)


def peak_tflops(device: torch.device, precision: str) -> float | None:
    """The card's peak for MFU; None on the CPU, in fp32, or for a card not in PEAK_TFLOPS."""
    if device.type != "cuda" or precision not in ("bf16", "fp16"):
        return None
    name = torch.cuda.get_device_name(device)
    return next((peak for part, peak in PEAK_TFLOPS if part in name), None)


def gpu_busy(device: torch.device) -> float | None:
    """The GPU's busy share now (percent), None on the CPU or where NVML cannot say."""
    if device.type != "cuda":
        return None
    try:
        return float(torch.cuda.utilization(device))
    except Exception:  # noqa: BLE001  no pynvml / no NVML library: the record says null
        return None


def peak_memory_gib(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # KiB on Linux


class CardMeter:
    """Counts what the steps did (module docstring)."""

    def __init__(self, model_config, device: torch.device, precision: str, world_size: int):
        self.config, self.device, self.world_size = model_config, device, world_size
        self.peak = peak_tflops(device, precision)
        self.formula = modernbert_train_flops if hasattr(model_config, "local_attention") else train_flops
        self.closing = False
        self.new_phase()

    def new_phase(self) -> None:
        self.window_sums = [0, 0.0, []]    # tokens, FLOPs, busy samples
        self.phase_sums = [0, 0.0, [], 0.0]   # ... and the seconds
        self.last_sample = 0.0
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)

    def count(self, host: dict) -> dict:
        """A micro-batch's real tokens and model FLOPs (from its host tensors); returns it."""
        lengths = (torch.diff(host["unpadded"].cu_seqlens.long()) if "unpadded" in host
                   else host["input_mask"].sum(1))   # the segments attention runs over
        masked = int((host["masked_lm_labels"] >= 0).sum())
        try:
            flops = float(self.formula(self.config, lengths.numpy().astype(np.int64), masked).total)
        except AttributeError:   # a config without the formula's sizes: no FLOPs, no MFU
            flops = float("nan")
        tokens = int(lengths.sum())
        self.window_sums[0] += tokens     # into the phase's sums with the window's seconds
        self.window_sums[1] += flops
        self.sample()
        return host

    def sample(self) -> None:
        """The GPU's busy share, at most every SAMPLE_EVERY_S (CUDA only)."""
        now = time.monotonic()
        if self.device.type == "cuda" and now - self.last_sample >= SAMPLE_EVERY_S:
            self.last_sample = now
            busy = gpu_busy(self.device)
            if busy is not None:
                self.window_sums[2].append(busy)

    def figures(self, tokens: int, flops: float, busy: list, seconds: float) -> dict:
        tflops = flops * self.world_size / seconds / 1e12 if seconds > 0 else float("nan")
        tflops = None if tflops != tflops else tflops   # nan: not counted
        return {"tokens_per_sec": tokens * self.world_size / seconds if seconds > 0 else 0.0,
                "tflops": tflops,
                "mfu": tflops / self.world_size / self.peak if (self.peak and tflops is not None) else None,
                "peak_memory_gib": peak_memory_gib(self.device),
                "gpu_busy": sum(busy) / len(busy) if busy else None}

    def window(self, seconds: float, phase: int) -> dict:
        """The figures of the steps since the last window (their `seconds`), and when `closing`
        phase `phase`'s (0-based; every step of it this process trained) as phase_* keys, with
        a log line; a new window."""
        tokens, flops, busy = self.window_sums
        self.window_sums = [0, 0.0, []]
        # the phase's sums gain tokens and seconds together: an eval between two windows
        # (so_far) divides what was timed by its time, never later tokens by earlier seconds
        self.phase_sums[0] += tokens
        self.phase_sums[1] += flops
        self.phase_sums[2] += busy
        self.phase_sums[3] += seconds
        record = self.figures(tokens, flops, busy, seconds)
        if self.closing:
            whole = self.so_far()
            logging.getLogger("trainer").info("phase %d: %s", phase + 1, figures_line(whole))
            record.update({f"phase_{k}": v for k, v in whole.items()})
        return record

    def so_far(self) -> dict:
        """The current phase's figures so far."""
        return self.figures(*self.phase_sums)


def figures_line(r: dict) -> str:
    """'71,234 tokens/s, 12.3 TFLOP/s, MFU 31.2%, peak 3.1 GiB, GPU busy 97%': what is known."""
    parts = [f"{r['tokens_per_sec']:,.0f} tokens/s"]
    if r.get("tflops") is not None:
        parts.append(f"{r['tflops']:.3g} TFLOP/s")
    if r.get("mfu") is not None:
        parts.append(f"MFU {100 * r['mfu']:.1f}%")
    parts.append(f"peak {r['peak_memory_gib']:.1f} GiB")
    if r.get("gpu_busy") is not None:
        parts.append(f"GPU busy {r['gpu_busy']:.0f}%")
    return ", ".join(parts)
