"""Which speed options a run uses: torch.compile and unpadding, on by default where measured faster.

    compile_on, unpad_on, note = resolve_speed_options(args, "cuda", "bf16", family)
    log.info(note)

`--torch_compile` / `--unpad` (or `--no-...`, or the keys in --config_file) decide when given.
Left out, both are on for a CUDA run in bf16 without DeepSpeed, and off elsewhere. On an H100
(bench/README.md, "bench_gpu.py") each was faster alone and both together fastest in every
BERT-base/large phase-1/phase-2 setting (BERT-large phase 1: 1,166 seq/s plain, 1,517 compiled,
1,634 both), and 100 steps of each gave the plain run's losses (scripts/gpu_checks.py). Not
measured, so not switched on: fp16 and fp32 on CUDA (fp32 has no flash kernel, so unpadding
falls back to padded attention), DeepSpeed's engine around a compiled model, and the CPU, where
compiling costs more than a short run gains. transformers' families (ModernBERT, RoBERTa/XLM-R,
DistilBERT) unpad through trainer/models/hf_varlen.py, on the same default: the flash varlen
path ModernBERT's authors train on, not yet measured on a GPU here (issue 48). Attention within
the documents of packed rows (--doc_attention within) unpads whatever this says.
"""
from __future__ import annotations


def auto_speed(device: str, precision: str, deepspeed: bool) -> bool:
    """Where compile and unpadding are on unless the user says otherwise."""
    return device == "cuda" and precision == "bf16" and not deepspeed


def resolve_speed_options(args, device: str, precision: str, family) -> tuple[bool, bool, str]:
    """(torch.compile on, unpadding on, one line saying what and why): the flags when given,
    else the default for `device`/`precision`; never unpadding for a family that has none."""
    auto = auto_speed(device, precision, bool(args.deepspeed))
    chosen, parts, defaults = {}, [], []
    for key, name in (("torch_compile", "torch.compile"), ("unpad", "unpadding")):
        given = getattr(args, key)
        if key == "unpad" and not family.unpads:
            given = False
        chosen[key] = auto if given is None else bool(given)
        parts.append(f"{name} {'on' if chosen[key] else 'off'}")
        if given is None:
            defaults.append(name)
    if not family.unpads:
        parts[-1] += f" ({family.display_name} has none)"
    where = f"{device} {precision}" + (" with DeepSpeed" if args.deepspeed else "")
    why = f" ({' and '.join(defaults)}: the default for {where})" if defaults else ""
    return chosen["torch_compile"], chosen["unpad"], "speed: " + ", ".join(parts) + why
