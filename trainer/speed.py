"""Which speed options a run uses: torch.compile and unpadding, on by default where measured faster.

    note = resolve_speed_options(args, device="cuda", precision="bf16")   # sets args.torch_compile
    log.info(note)                                                        # and args.unpad

`--torch_compile` / `--unpad` (or `--no-...`, or the keys in --config_file) decide when given.
Left out, both are on for a CUDA run in bf16 without DeepSpeed, and off elsewhere. On an H100
(bench/README.md, "bench_gpu.py") each was faster alone and both together fastest in every
BERT-base/large phase-1/phase-2 setting (BERT-large phase 1: 1,166 seq/s plain, 1,517 compiled,
1,634 both), and 100 steps of each gave the plain run's losses (scripts/gpu_checks.py). Not
measured, so not switched on: fp16 and fp32 on CUDA (fp32 has no flash kernel, so unpadding
falls back to padded attention), DeepSpeed's engine around a compiled model, and the CPU, where
compiling costs more than a short run gains.
"""
from __future__ import annotations


def auto_speed(device: str, precision: str, deepspeed: bool) -> bool:
    """Where compile and unpadding are on unless the user says otherwise."""
    return device == "cuda" and precision == "bf16" and not deepspeed


def resolve_speed_options(args, device: str, precision: str) -> str:
    """Fill in args.torch_compile and args.unpad when left out (None); one line saying what and why."""
    auto = auto_speed(device, precision, bool(args.deepspeed))
    parts, defaults = [], []
    if getattr(args, "model_type", "bert") == "modernbert":
        args.unpad = False   # transformers' ModernBERT has no unpadding of its own
    for key, name in (("torch_compile", "torch.compile"), ("unpad", "unpadding")):
        given = getattr(args, key)
        setattr(args, key, auto if given is None else bool(given))
        parts.append(f"{name} {'on' if getattr(args, key) else 'off'}")
        if given is None:
            defaults.append(name)
    if getattr(args, "model_type", "bert") == "modernbert":
        parts[-1] += " (ModernBERT has none)"
    where = f"{device} {precision}" + (" with DeepSpeed" if args.deepspeed else "")
    why = f" ({' and '.join(defaults)}: the default for {where})" if defaults else ""
    return "speed: " + ", ".join(parts) + why
