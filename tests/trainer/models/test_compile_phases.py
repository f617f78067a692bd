"""--torch_compile over a three-phase ModernBERT run compiles each kind of layer a fixed few times
(static, dynamic, and the same in eval mode), never up to Dynamo's recompile limit, where a run
on an H200 fell back to eager (`sliding_window == 65` guarded per layer, a variant per phase).

Slow: Inductor compiles each kind's forward and backward to C++ on the CPU."""
from __future__ import annotations

import json
from collections import Counter

import pytest
import torch
from torch._dynamo.eval_frame import dynamo_tls
from torch._dynamo.utils import counters

from tests.helpers.trainer_cli import base_args, read_log
from tests.trainer.conftest import VOCAB_SIZE, make_shard_dir
from trainer.models import get_family
from trainer.models.layer_compile import compile_by_kind, layer_kinds
from trainer.run_pretraining import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]
# ModernBERT's kinds in this config: the first layer (global, no attention norm), then the
# local ones (window 16) and a global one (layer 3)
CONFIG = {"vocab_size": VOCAB_SIZE, "hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2,
          "intermediate_size": 48, "max_position_embeddings": 256, "local_attention": 16,
          "global_attn_every_n_layers": 3}
KINDS = 3
# a kind's compiles: static and dynamic, in train and in eval mode; unpadded on the CPU (no flash
# kernel) the grouped attention also guards the number of rows in a group: one more variant for
# each batch size (a phase's, an evaluation's) beside those four, still under the limit (8)
A_KIND = {False: 4, True: 6}


def three_phase_run(tmp_path, unpad: bool, **extra):
    dirs = {s: make_shard_dir(tmp_path / f"s{s}", sizes=(40,), test_sizes=(12,), seq_len=s, max_pred=s // 4)
            for s in (64, 128, 256)}
    cfg = tmp_path / "modern.json"
    cfg.write_text(json.dumps(CONFIG))
    phases = tmp_path / "phases.json"
    phases.write_text(json.dumps([{"input_dir": str(dirs[64]), "share": 0.4},
                                  {"input_dir": str(dirs[128]), "share": 0.3},
                                  {"input_dir": str(dirs[256]), "share": 0.3, "train_batch_size": 2}]))
    out = tmp_path / "run"
    argv = base_args(None, cfg, out, vocab=None, max_steps=10, checkpoint_every=100, eval_every=3,
                     model_type="modernbert", masking="dynamic", optimizer="adamw", train_batch_size=4,
                     torch_compile=True, unpad=unpad, **extra) + ["--phases", str(phases)]
    return out, argv


def compiled_run(argv, tiny_vocab, out) -> tuple[list, Counter]:
    """The run's train_log.jsonl records and the frames Dynamo compiled, by function."""
    torch._dynamo.reset()
    counters.clear()
    dynamo_tls.traced_frame_infos.clear()   # not cleared by reset(): this run's frames only
    assert main([*argv, "--vocab_file", str(tiny_vocab)]) == 0
    return read_log(out), Counter(info.split()[0] for info in dynamo_tls.traced_frame_infos)


@pytest.mark.parametrize("unpad", [False, True], ids=["padded", "unpadded"])
def test_three_phases_compile_each_kind_a_few_times(unpad, tmp_path, tiny_vocab, capfd):
    out, argv = three_phase_run(tmp_path, unpad)
    log, by_code = compiled_run(argv, tiny_vocab, out)
    assert [r["seq_len"] for r in log if "phase_start" in r] == [64, 128, 256]
    assert len([r for r in log if "eval_loss" in r]) >= 3          # eval mode in every phase
    frames = counters["frames"]["total"]
    assert KINDS <= frames <= A_KIND[unpad] * KINDS, dict(counters["frames"])
    assert counters["stats"]["unique_graphs"] <= A_KIND[unpad] * KINDS
    # Dynamo's cache and its limit are per code object: the frames it compiled, by function, each
    # a kind's (one code object shared by every layer, as before, held every variant of every kind)
    assert len(by_code) == KINDS and max(by_code.values()) <= A_KIND[unpad], by_code
    assert max(by_code.values()) < torch._dynamo.config.recompile_limit
    assert "recompile_limit" not in capfd.readouterr().err


def test_the_kinds_of_modernbert_layers(tmp_path):
    """The first layer, the local ones and the global ones: three kinds, each a code object of
    its own (its own Dynamo cache); the layers keep their parameter names."""
    family = get_family("modernbert")
    model = family.build(family.read_config(CONFIG, "test"), unpad=False, nsp=False)
    names = list(model.state_dict())
    kinds = layer_kinds(model.model.layers, lambda layer: (type(layer.attn_norm), layer.attn.sliding_window))
    assert [len(layers) for layers in kinds.values()] == [1, 2, 1]
    functions = compile_by_kind(model.model.layers, lambda layer: (type(layer.attn_norm),
                                                                   layer.attn.sliding_window))
    assert len({f.__code__ for f in functions}) == KINDS
    assert list(model.state_dict()) == names


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the CPU tests above run everywhere)")
def test_on_cuda_each_kind_compiles_at_most_four_times_and_the_record_says_what_the_card_did(
        tmp_path, tiny_vocab, capfd):
    """bf16, unpadded: FlashAttention's varlen kernel (no groups of rows walked in Python), so
    static and dynamic in train and eval mode at most; tokens/s, MFU where the card's peak is
    known, the allocator's peak, the GPU's busy share where NVML answers."""
    out, argv = three_phase_run(tmp_path, True, device="cuda", precision="bf16")
    log, by_code = compiled_run(argv, tiny_vocab, out)
    assert len(by_code) == KINDS and max(by_code.values()) <= A_KIND[False], by_code
    assert "recompile_limit" not in capfd.readouterr().err
    ends = [r for r in log if "phase_tokens_per_sec" in r]
    assert len(ends) == 3
    for r in ends:
        assert r["phase_tokens_per_sec"] > 0 and 0 < r["phase_peak_memory_gib"] < 100
        assert r["phase_mfu"] is None or 0 < r["phase_mfu"] < 1
        assert r["phase_gpu_busy"] is None or 0 <= r["phase_gpu_busy"] <= 100
