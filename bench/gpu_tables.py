"""bench_gpu.py's tables: one row per setting, and the summary (ours against HF, the loader's cost).

    print(HEADER); print(row(setting, result, peak_tflops))
    for line in summary(results, peak_tflops): print(line)
"""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Setting:
    model: str
    phase: int
    precision: str
    variant: str
    batch: int


@dataclass
class Result:
    samples_s: float
    tokens_s: float
    tflops: float
    padding: float
    data_share: float
    opt_ms: float
    peak_gib: float | None
    profile: object = None       # bench/gpu_profile.py's ProfileReport, with --profile


def row(s: Setting, r: Result | None, peak_tflops: float | None, note: str = "") -> str:
    head = f"| {s.model} | {s.phase} | {s.precision} | {s.variant} | {s.batch} |"
    if r is None:
        return head + f" {note} |" + " |" * 7
    mfu = f"{100 * r.tflops / peak_tflops:.1f}%" if peak_tflops else "n/a"
    peak = f"{r.peak_gib:.1f}" if r.peak_gib is not None else "n/a"
    return (head + f" {r.samples_s:,.1f} | {r.tokens_s:,.0f} | {r.tflops:.3g} | {mfu} | "
            f"{100 * r.padding:.1f}% | {peak} | {100 * r.data_share:.2f}% | {r.opt_ms:.2f} |")


HEADER = ("| model | phase | precision | variant | batch | samples/s | real tokens/s | model "
          "TFLOP/s | MFU | padding | peak GiB | data | opt ms |\n" + "|---" * 13 + "|")


def summary(results: dict, peak_tflops: float | None) -> list[str]:
    """Ours (best variant) against HF (best of eager and compiled), per model/phase/precision."""
    lines = ["| model | phase | precision | ours best | samples/s | MFU | data | HF best | "
             "samples/s | ours / HF |", "|---" * 10 + "|"]
    groups = {}
    for s, r in results.items():
        groups.setdefault((s.model, s.phase, s.precision), []).append((s, r))
    for (model, phase, precision), items in groups.items():
        ours = [(s, r) for s, r in items if s.variant.startswith("ours") and r
                and "staged" not in s.variant]
        hf = [(s, r) for s, r in items if s.variant.startswith("hf") and r]
        if not ours:
            continue
        so, ro = max(ours, key=lambda x: x[1].samples_s)
        mfu = f"{100 * ro.tflops / peak_tflops:.1f}%" if peak_tflops else "n/a"
        line = (f"| {model} | {phase} | {precision} | {so.variant} | {ro.samples_s:,.1f} | {mfu} | "
                f"{100 * ro.data_share:.2f}% |")
        if hf:
            sh, rh = max(hf, key=lambda x: x[1].samples_s)
            line += f" {sh.variant} | {rh.samples_s:,.1f} | {ro.samples_s / rh.samples_s:.2f}x |"
        else:
            line += " n/a | | |"
        lines.append(line)
    for s, r in results.items():  # the loader's cost: a variant against its staged twin
        twin = results.get(replace(s, variant=s.variant.replace("+staged", ""))) if r else None
        if "staged" in s.variant and twin:
            lines.append(f"- {s.model} phase {s.phase} {s.precision}: the loader costs "
                         f"{100 * (1 - twin.samples_s / r.samples_s):.1f}% of "
                         f"{s.variant.replace('+staged', '')}'s time ({twin.samples_s:,.1f} "
                         f"samples/s, {r.samples_s:,.1f} with the batches already on the GPU)")
    return lines


def add_timing_options(ap, warmup_help: str, out_help: str) -> None:
    """The options both GPU benches take for how they time and what they print."""
    from pathlib import Path

    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=1, help="timed optimizer steps per run")
    ap.add_argument("--warmup", type=int, default=1, help=warmup_help)
    ap.add_argument("--peak-tflops", type=float, default=None,
                    help="for MFU (default: 989 on CUDA, the H100's dense bf16; none on CPU)")
    ap.add_argument("--budget-min", type=float, default=None,
                    help="start no new setting after this many minutes (the rest are listed)")
    ap.add_argument("--out", type=Path, default=None, help=out_help)
