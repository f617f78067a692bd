"""What the device did (trainer/runtime/card_use.py): real tokens and model FLOPs counted from the
host batches (a row, or a document of a packed row, a segment), the window's and the phase's
figures, MFU only where the card's peak is known, and the line the log prints."""
from __future__ import annotations

import pytest
import torch

from trainer.data.unpadding import host_unpadded
from trainer.models import get_family
from trainer.runtime.card_use import CardMeter, figures_line, peak_tflops
from trainer.runtime.flops import modernbert_train_flops

CONFIG = {"vocab_size": 200, "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 2,
          "intermediate_size": 48, "max_position_embeddings": 64, "local_attention": 4}


def batch(lengths, width=8, doc_starts=None):
    mask = torch.zeros(len(lengths), width, dtype=torch.long)
    for i, n in enumerate(lengths):
        mask[i, :n] = 1
    labels = torch.full((len(lengths), 3), -1)
    labels[:, 0] = 5                                  # one masked token a row
    host = {"input_mask": mask, "masked_lm_labels": labels}
    if doc_starts is not None:
        host["unpadded"] = host_unpadded(mask, doc_starts)
    return host


def test_tokens_and_flops_are_counted_by_the_segments_attention_runs_over():
    config = get_family("modernbert").read_config(CONFIG, "test")
    meter = CardMeter(config, torch.device("cpu"), "fp32", world_size=2)
    meter.count(batch([8, 5]))
    starts = torch.zeros(2, 8, dtype=torch.long)
    starts[0, [0, 3]] = 1                             # row 0: documents of 3 and 5 tokens
    starts[1, 0] = 1
    meter.count(batch([8, 5], doc_starts=starts))
    want = (modernbert_train_flops(config, [8, 5], 2).total
            + modernbert_train_flops(config, [3, 5, 5], 2).total)
    r = meter.window(2.0, 0)
    assert r["tokens_per_sec"] == pytest.approx(26 * 2 / 2.0)              # both ranks'
    assert r["tflops"] == pytest.approx(want * 2 / 2.0 / 1e12)
    assert r["mfu"] is None and r["gpu_busy"] is None and r["peak_memory_gib"] > 0.01   # the CPU
    assert "phase_tokens_per_sec" not in r
    assert meter.window(1.0, 0)["tokens_per_sec"] == 0.0                   # a new window


def test_a_phases_last_record_holds_the_whole_phase():
    config = get_family("modernbert").read_config(CONFIG, "test")
    meter = CardMeter(config, torch.device("cpu"), "fp32", world_size=1)
    meter.count(batch([8, 8]))
    meter.window(1.0, 0)
    meter.count(batch([4, 4]))
    meter.closing = True
    r = meter.window(1.0, 0)
    assert r["tokens_per_sec"] == 8 and r["phase_tokens_per_sec"] == pytest.approx(24 / 2.0)
    meter.new_phase()
    assert meter.so_far()["tokens_per_sec"] == 0.0


def test_mfu_needs_a_known_card_in_bf16_or_fp16():
    assert peak_tflops(torch.device("cpu"), "bf16") is None
    line = figures_line({"tokens_per_sec": 391234.4, "tflops": 301.2, "mfu": 0.3046, "peak_memory_gib": 41.26,
                         "gpu_busy": 96.4})
    assert line == "391,234 tokens/s, 301 TFLOP/s, MFU 30.5%, peak 41.3 GiB, GPU busy 96%"
    assert figures_line({"tokens_per_sec": 12.0, "tflops": None, "mfu": None, "peak_memory_gib": 0.5,
                         "gpu_busy": None}) == "12 tokens/s, peak 0.5 GiB"


def test_an_eval_between_windows_divides_what_was_timed_by_its_time():
    """so_far (the eval record's figures) counts the tokens of the windows whose seconds it has:
    micro-batches after the last window are not divided by the earlier windows' seconds."""
    config = get_family("modernbert").read_config(CONFIG, "test")
    meter = CardMeter(config, torch.device("cpu"), "fp32", world_size=1)
    meter.count(batch([8, 8]))
    meter.window(2.0, 0)
    meter.count(batch([8, 8]))                        # not yet in a window: no seconds for it
    assert meter.so_far()["tokens_per_sec"] == pytest.approx(16 / 2.0)
    meter.window(2.0, 0)
    assert meter.so_far()["tokens_per_sec"] == pytest.approx(32 / 4.0)


def test_each_card_gets_its_own_peak():
    from trainer.runtime.card_use import PEAK_TFLOPS

    def first(name):
        return next(peak for part, peak in PEAK_TFLOPS if part in name)
    assert first("NVIDIA L40") == 181.0 and first("NVIDIA L40S") == 362.0 and first("NVIDIA L4") == 121.0
