"""--torch_compile over a three-phase ModernBERT run compiles each kind of layer a fixed few times
(static, dynamic, and the same in eval mode), never up to Dynamo's recompile limit, where a run
on an H200 fell back to eager (`sliding_window == 65` guarded per layer, a variant per phase) and
a CPU run over a real dump did (`len(kwargs['doc_layout'].groups) == 3`: the number of groups of
documents guarded, and it changes with every batch). So the rows are real, varying documents:
the shipped sample dump through the pipeline, packed at 64, 128 and 256 tokens.

Slow: Inductor compiles each kind's forward and backward to C++ on the CPU."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch
from torch._dynamo.eval_frame import dynamo_tls
from torch._dynamo.utils import counters

from pipeline.stages.encode import encode
from tests.helpers.export_corpus import build_corpus
from tests.helpers.trainer_cli import base_args, read_log
from trainer.data import find_shards, read_shard
from trainer.data.unpadding import host_unpadded
from trainer.models import get_family
from trainer.models.layer_compile import compile_by_kind, layer_kinds
from trainer.run_pretraining import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]
# ModernBERT's kinds in this config: the first layer (global, no attention norm), then the
# local ones (window 16) and a global one (layer 3)
CONFIG = {"hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 48,
          "max_position_embeddings": 256, "local_attention": 16, "global_attn_every_n_layers": 3}
KINDS = 3
# a kind's compiles: static and dynamic, in train and in eval mode, padded or not (the groups
# of documents of attention without flash are an operator's business, not guarded)
A_KIND = 4
SEQ_LENS = (64, 128, 256)
BATCH = {64: 4, 128: 4, 256: 2}


@pytest.fixture(scope="module")
def real_rows(tmp_path_factory) -> tuple[dict[int, Path], Path]:
    """({seq_len: encode's folder of packed rows}, the vocab) of the shipped sample dump."""
    data = tmp_path_factory.mktemp("sample")
    dirs = {64: build_corpus(data)}
    for seq in SEQ_LENS[1:]:
        summary = encode(data_dir=data, lang="hu", workers=1, max_seq=seq, max_pred=seq // 6, dupe_factor=1,
                         pack=True)
        dirs[seq] = Path(summary["output"]).parent
    return dirs, data / "hu" / "vocab"


def three_phase_run(tmp_path, real_rows, across: bool = False, **extra):
    dirs, vocab = real_rows
    cfg = tmp_path / "modern.json"
    vocab_size = len((vocab / "vocab.txt").read_text(encoding="utf-8").splitlines())
    cfg.write_text(json.dumps({**CONFIG, "vocab_size": vocab_size}))
    phases = tmp_path / "phases.json"
    phases.write_text(json.dumps([{"input_dir": str(dirs[64]), "share": 0.4},
                                  {"input_dir": str(dirs[128]), "share": 0.3},
                                  {"input_dir": str(dirs[256]), "share": 0.3, "train_batch_size": BATCH[256]}]))
    out = tmp_path / "run"
    argv = base_args(None, cfg, out, vocab=vocab, max_steps=10, checkpoint_every=100, eval_every=3,
                     model_type="modernbert", masking="dynamic", optimizer="adamw", train_batch_size=BATCH[64],
                     torch_compile=True, **({"doc_attention": "across", "unpad": False} if across else {}),
                     **extra) + ["--phases", str(phases)]
    return out, argv


def compiled_run(argv, out) -> tuple[list, Counter]:
    """The run's train_log.jsonl records and the frames Dynamo compiled, by function."""
    torch._dynamo.reset()
    counters.clear()
    dynamo_tls.traced_frame_infos.clear()   # not cleared by reset(): this run's frames only
    assert main(argv) == 0
    return read_log(out), Counter(info.split()[0] for info in dynamo_tls.traced_frame_infos)


def test_the_real_rows_vary_in_their_groups_of_documents(real_rows):
    """What the compile test below stands on: batches of the sample's packed rows differ in how
    many groups of documents (by length) attention without flash gathers them in."""
    dirs, _ = real_rows
    counts = set()
    for seq, folder in dirs.items():
        for info in find_shards(folder).train:
            rows = read_shard(info.path, optional=("doc_starts",))
            for start in range(0, len(rows["input_mask"]) - BATCH[seq] + 1, BATCH[seq]):
                batch = [torch.from_numpy(rows[k][start:start + BATCH[seq]]).long()
                         for k in ("input_mask", "doc_starts")]
                counts.add(len(host_unpadded(*batch).groups))
    assert len(counts) >= 2, counts


@pytest.mark.parametrize("across", [True, False], ids=["padded", "within-documents"])
def test_three_phases_compile_each_kind_a_few_times(across, real_rows, tmp_path, capfd):
    out, argv = three_phase_run(tmp_path, real_rows, across)
    log, by_code = compiled_run(argv, out)
    assert [r["seq_len"] for r in log if "phase_start" in r] == list(SEQ_LENS)
    assert len([r for r in log if "eval_loss" in r]) >= 3          # eval mode in every phase
    frames = counters["frames"]["total"]
    assert KINDS <= frames <= A_KIND * KINDS, dict(counters["frames"])
    assert counters["stats"]["unique_graphs"] <= A_KIND * KINDS
    # Dynamo's cache and its limit are per code object: the frames it compiled, by function, each
    # a kind's (one code object shared by every layer, as before, held every variant of every kind)
    assert len(by_code) == KINDS and max(by_code.values()) <= A_KIND, by_code
    assert max(by_code.values()) < torch._dynamo.config.recompile_limit
    assert "recompile_limit" not in capfd.readouterr().err


def test_the_kinds_of_modernbert_layers(tmp_path):
    """The first layer, the local ones and the global ones: three kinds, each a code object of
    its own (its own Dynamo cache); the layers keep their parameter names."""
    family = get_family("modernbert")
    model = family.build(family.read_config({**CONFIG, "vocab_size": 200}, "test"), unpad=False, nsp=False)
    names = list(model.state_dict())
    kinds = layer_kinds(model.model.layers, lambda layer: (type(layer.attn_norm), layer.attn.sliding_window))
    assert [len(layers) for layers in kinds.values()] == [1, 2, 1]
    functions = compile_by_kind(model.model.layers, lambda layer: (type(layer.attn_norm),
                                                                   layer.attn.sliding_window))
    assert len({f.__code__ for f in functions}) == KINDS
    assert list(model.state_dict()) == names


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the CPU tests above run everywhere)")
def test_on_cuda_each_kind_compiles_at_most_four_times_and_the_record_says_what_the_card_did(
        real_rows, tmp_path, capfd):
    """bf16, unpadded: FlashAttention's varlen kernel (no groups of rows walked in Python), so
    static and dynamic in train and eval mode at most; tokens/s, MFU where the card's peak is
    known, the allocator's peak, the GPU's busy share where NVML answers."""
    out, argv = three_phase_run(tmp_path, real_rows, device="cuda", precision="bf16")
    log, by_code = compiled_run(argv, out)
    assert len(by_code) == KINDS and max(by_code.values()) <= A_KIND, by_code
    assert "recompile_limit" not in capfd.readouterr().err
    ends = [r for r in log if "phase_tokens_per_sec" in r]
    assert len(ends) == 3
    for r in ends:
        assert r["phase_tokens_per_sec"] > 0 and 0 < r["phase_peak_memory_gib"] < 100
        assert r["phase_mfu"] is None or 0 < r["phase_mfu"] < 1
        assert r["phase_gpu_busy"] is None or 0 <= r["phase_gpu_busy"] <= 100
