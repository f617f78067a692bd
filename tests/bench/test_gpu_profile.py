"""bench/gpu_profile.py's bookkeeping (the profiler run itself needs CUDA: bench/README.md)."""
from __future__ import annotations

from tests.helpers.script_module import load_script

profile = load_script("bench/gpu_profile.py")


def test_busy_time_is_the_union_of_kernel_intervals():
    assert profile.busy_us([(0, 10), (5, 15), (20, 30), (21, 22)]) == 25
    assert profile.busy_us([]) == 0


def test_kernel_kinds_from_their_names():
    kinds = {name: profile.kind_of(name) for name in (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN",
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128>>",
        "fmha_cutlassB_bf16_aligned_64x64_k64_sm80", "Memcpy HtoD (Pinned -> Device)",
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>",
        "triton_per_fused_add_native_layer_norm_0", "void at::native::vectorized_layer_norm_kernel<float>",
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>")}
    assert list(kinds.values()) == ["matmul", "matmul", "attention", "attention", "copy", "optimizer",
                                    "compiled (triton)", "layernorm", "elementwise/other"]


def test_report_shares_and_idle():
    r = profile.ProfileReport(steps=2, wall_ms=100.0, busy_ms=80.0,
                              by_kind={"matmul": 60.0, "attention": 20.0},
                              kernels=[("gemm", 60.0, 48), ("flash", 20.0, 24)])
    assert abs(r.idle - 0.2) < 1e-9
    assert "idle 20.0%" in r.summary() and "matmul 75%" in r.summary()
    assert "| `gemm` | matmul | 60.000 | 48 |" in r.table()
