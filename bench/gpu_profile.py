"""Where a training step's GPU time goes: torch.profiler over a few steps, kernels by kind.

    from bench.gpu_profile import profile_steps
    report = profile_steps(step, steps=3)      # step(): one training step, ends with a host sync
    print(report.summary())                    # one line: wall, GPU busy, idle, shares by kind
    Path("p.md").write_text(report.table())    # the same plus the top kernels

Used by bench/bench_gpu.py --profile. The kinds come from the kernel names (cuBLAS/CUTLASS
matmuls, FlashAttention and the memory-efficient attention kernels, Triton kernels that
torch.compile generated, LayerNorm, the optimizer's multi-tensor kernels, copies); "idle" is
the share of the steps' wall time in which no kernel ran, which is what the host costs (data,
launches, syncs).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# (kind, substrings of a lower-cased kernel name), first match wins
KINDS = (
    ("attention", ("flash", "fmha", "attention", "attn")),
    ("copy", ("memcpy", "memset")),
    ("optimizer", ("multi_tensor", "foreach")),
    ("matmul", ("gemm", "cutlass", "nvjet", "xmma", "cublas", "sm90_", "sm80_", "wgmma")),
    ("compiled (triton)", ("triton",)),
    ("layernorm", ("layer_norm", "layernorm")),
    ("reduction", ("reduce", "norm")),
)


def kind_of(name: str) -> str:
    low = name.lower()
    for kind, keys in KINDS:
        if any(k in low for k in keys):
            return kind
    return "elementwise/other"


def busy_us(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of [start, end) intervals (kernels of several streams may overlap)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


@dataclass
class ProfileReport:
    steps: int
    wall_ms: float                                     # per step
    busy_ms: float                                     # per step, union of kernel time
    by_kind: dict[str, float] = field(default_factory=dict)           # ms per step
    kernels: list[tuple[str, float, int]] = field(default_factory=list)  # name, ms/step, calls/step

    @property
    def idle(self) -> float:
        return max(0.0, 1 - self.busy_ms / self.wall_ms) if self.wall_ms else 0.0

    def summary(self) -> str:
        kernel_ms = sum(self.by_kind.values()) or 1.0
        shares = ", ".join(f"{k} {100 * v / kernel_ms:.0f}%" for k, v in
                           sorted(self.by_kind.items(), key=lambda kv: -kv[1]) if v / kernel_ms >= 0.01)
        return (f"{self.wall_ms:.1f} ms/step wall, GPU busy {self.busy_ms:.1f} ms "
                f"(idle {100 * self.idle:.1f}%); kernel time: {shares}")

    def table(self, top: int = 25) -> str:
        lines = [self.summary(), "", "| kind | ms/step | share of kernel time |", "|---|---|---|"]
        kernel_ms = sum(self.by_kind.values()) or 1.0
        for k, v in sorted(self.by_kind.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {k} | {v:.2f} | {100 * v / kernel_ms:.1f}% |")
        lines += ["", "| kernel | kind | ms/step | calls/step |", "|---|---|---|---|"]
        for name, ms, calls in self.kernels[:top]:
            lines.append(f"| `{name[:110]}` | {kind_of(name)} | {ms:.3f} | {calls} |")
        return "\n".join(lines) + "\n"


def profile_steps(step, steps: int = 3) -> ProfileReport:
    """Run `step()` `steps` times under torch.profiler (CPU + CUDA) and sort its kernels."""
    import time

    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    device = torch.autograd.DeviceType.CUDA
    # GPU-side user annotations (e.g. "Optimizer.step#Lamb.step") span kernels: not kernels
    kernels = [e for e in prof.events() if e.device_type == device
               and not getattr(e, "is_user_annotation", False) and "#" not in e.name]
    per_name: dict[str, list[float]] = {}
    intervals = []
    for e in kernels:
        start, end = e.time_range.start, e.time_range.end
        intervals.append((start, end))
        per_name.setdefault(e.name, []).append(end - start)
    by_kind: dict[str, float] = {}
    for name, durations in per_name.items():
        by_kind[kind_of(name)] = by_kind.get(kind_of(name), 0.0) + sum(durations) / 1e3 / steps
    top = sorted(((n, sum(d) / 1e3 / steps, round(len(d) / steps)) for n, d in per_name.items()),
                 key=lambda x: -x[1])
    return ProfileReport(steps=steps, wall_ms=wall * 1e3 / steps,
                         busy_ms=busy_us(intervals) / 1e3 / steps, by_kind=by_kind, kernels=top)
