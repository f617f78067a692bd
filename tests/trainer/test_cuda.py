"""The trainer's CUDA paths: flash varlen attention against the padded model, compiled and
unpadded runs, LAMB's foreach ops on CUDA tensors, pinned batches, bf16 and fp16 runs; attention
within documents on flash varlen (segments, ModernBERT's windows) against the padded path.

Runs only where a CUDA device is present (the GPU machine: bench/README.md gives the command);
every path here also has a CPU test that runs everywhere (models/test_unpadding.py, models/test_compile.py,
test_optim.py, test_data.py)."""
from __future__ import annotations

import copy
import json

import pytest
import torch

from tests.helpers.bert_batches import varied_batch
from tests.helpers.doc_attention import ROWS, dense_reference, layout, packed_batch, packed_dir, tiny_config
from tests.helpers.trainer_cli import base_args, read_log
from trainer.data import ShardedTrainData, find_shards
from trainer.data.unpadding import host_unpadded
from trainer.models.bert_network import BertConfig, BertForPreTraining
from trainer.models.varlen import flash_varlen_usable, varlen_attention
from trainer.run_pretraining import main
from trainer.schedule.optim import build_optimizer

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SMALL = dict(vocab_size=200, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
             intermediate_size=256, max_position_embeddings=64, type_vocab_size=2)


def models(**extra):
    config = BertConfig(**SMALL, **extra)
    torch.manual_seed(0)
    padded = BertForPreTraining(config).cuda()
    unpadded = BertForPreTraining(config, unpad=True).cuda()
    unpadded.load_state_dict(padded.state_dict())
    return padded, unpadded


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_flash_varlen_gives_the_padded_logits_and_gradients(dtype):
    assert flash_varlen_usable(torch.zeros(1, 2, 64, device="cuda", dtype=dtype))
    padded, unpadded = models(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    b = {k: v.cuda() for k, v in varied_batch().items()}
    with torch.autocast("cuda", dtype=dtype):
        a, u = padded(**b), unpadded(**b)
    torch.testing.assert_close(u.mlm_logits, a.mlm_logits, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(u.loss, a.loss, rtol=1e-2, atol=1e-2)
    a.loss.backward()
    u.loss.backward()
    total = torch.stack([p.grad.norm() for p in padded.parameters()]).norm()
    for (name, p), q in zip(padded.named_parameters(), unpadded.parameters()):
        if name.endswith("attention.self.key.bias"):
            # softmax does not change when every key moves by the same q.b: the true gradient
            # is 0 and both are rounding noise (a relative error of noise means nothing)
            assert max(p.grad.norm(), q.grad.norm()) < 1e-3 * total, name
            continue
        err = (q.grad - p.grad).norm() / p.grad.norm().clamp_min(1e-12)
        assert err < 3e-2, (name, float(err))


def test_a_training_forward_never_waits_for_the_gpu():
    """No host sync in the forward of a training micro-batch, padded or unpadded (with the real
    tokens found on the host, as the trainer does): the host stays ahead of the GPU."""
    padded, unpadded = models()
    host = varied_batch()
    b = {k: v.cuda() for k, v in host.items()}
    info = host_unpadded(host["input_mask"], pin=True).to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    for model, extra in ((padded, {}), (unpadded, {"unpadded": info})):
        torch.cuda.set_sync_debug_mode("error")
        try:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(**b, **extra).loss
        finally:
            torch.cuda.set_sync_debug_mode(0)
        loss.backward()
        assert torch.isfinite(loss)


def test_flash_varlen_with_dropout_trains():
    _, unpadded = models()
    b = {k: v.cuda() for k, v in varied_batch().items()}
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = unpadded(**b)
    out.loss.backward()
    assert torch.isfinite(out.loss)
    assert all(torch.isfinite(p.grad).all() for p in unpadded.parameters() if p.grad is not None)


def test_lamb_on_cuda_matches_lamb_on_cpu():
    """The foreach ops of trainer/schedule/optim.py on CUDA tensors: the CPU's step, to fp32 rounding."""
    torch.manual_seed(0)
    cpu = BertForPreTraining(BertConfig(**SMALL))
    gpu = BertForPreTraining(BertConfig(**SMALL)).cuda()
    gpu.load_state_dict(cpu.state_dict())
    opts = [build_optimizer(m, "lamb", lr=1e-2) for m in (cpu, gpu)]
    for _step in range(3):
        for p, q in zip(cpu.parameters(), gpu.parameters()):
            p.grad = torch.randn_like(p)
            q.grad = p.grad.cuda()
        for opt in opts:
            opt.step()
    for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        torch.testing.assert_close(q.cpu(), p, rtol=1e-5, atol=1e-6, msg=name)


def test_pinned_batches(tiny_shards):
    data = ShardedTrainData(find_shards(tiny_shards).train, 4, 0, 0, 1, pin_memory=True)
    batch = next(iter(data))
    data.close()
    assert all(t.is_pinned() for t in batch.values())


@pytest.mark.parametrize("flags", [{"precision": "bf16", "torch_compile": False, "unpad": False},
                                   {"precision": "fp16"},
                                   {"precision": "bf16"}])  # bf16's defaults: compile + unpad
def test_trainer_runs_on_cuda(tiny_shards, tmp_path, flags):
    cfg = tmp_path / "bert.json"
    cfg.write_text(json.dumps(SMALL))
    out = tmp_path / "run"
    assert main(base_args(tiny_shards, cfg, out, device="cuda", max_steps=6, **flags)) == 0
    losses = [r["loss"] for r in read_log(out) if "loss" in r]
    assert len(losses) == 6 and all(map(torch.isfinite, torch.tensor(losses)))


# -- attention within documents (trainer/models/varlen.py's flash path, hf_varlen.py) ----------

def doc_models(name: str):
    """(padded, unpadded) of a family on CUDA, same weights, dropout 0, head size 64 (flash's):
    ModernBERT with windows of 8 tokens each side."""
    extra = dict(hidden_size=128, intermediate_size=256, local_attention=16) if name == "modernbert" \
        else dict(hidden_size=128, intermediate_size=256)
    family, config = tiny_config(name, 256, dropout=False, **extra)
    torch.manual_seed(0)
    padded = family.build(copy.deepcopy(config), unpad=False, nsp=False).cuda()
    unpadded = family.build(copy.deepcopy(config), unpad=True, nsp=False).cuda()
    unpadded.load_state_dict(padded.state_dict())
    return padded, unpadded


@pytest.mark.parametrize("window", [None, 3, 40])
def test_flash_varlen_attends_within_segments_and_windows(window):
    """The kernel with cu_seqlens at every document and window_size_left/right against the dense
    masked attention in fp32 (same segment, |q - k| <= window), values and gradients."""
    info = layout(ROWS, 100)
    torch.manual_seed(0)
    T = info.indices.numel()
    q, k, v = (torch.randn(T, 2, 64, device="cuda", requires_grad=True) for _ in range(3))
    gpu = info.to("cuda")
    got = varlen_attention(*(t.bfloat16() for t in (q, k, v)), gpu, window=window)
    want = dense_reference(q.cpu(), k.cpu(), v.cpu(), info, window)
    torch.testing.assert_close(got.float().cpu(), want, rtol=2e-2, atol=2e-2)
    got.float().square().sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))


@pytest.mark.parametrize("name", ["bert", "modernbert"])
def test_within_documents_on_flash_gives_each_document_alone(name):
    """bf16 on flash varlen: a packed batch within documents against the same documents each in
    its own padded row through the padded path (transformers' SDPA and its window mask for
    ModernBERT), within bf16 rounding."""
    from tests.helpers.packed_rows import segments_as_rows

    padded, unpadded = doc_models(name)
    host = packed_batch(256, 4, unpad=True, within=True, lengths=(3, 300))
    ref, order = segments_as_rows(host)
    batch = {k: v.to("cuda") for k, v in host.items()}
    ref = {k: v.cuda() for k, v in ref.items()}
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        got, want = unpadded(**batch), padded(**ref)
    torch.testing.assert_close(got.mlm_logits[order].float(), want.mlm_logits.float(), rtol=3e-2, atol=3e-2)
    torch.testing.assert_close(got.loss, want.loss, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["bert", "modernbert"])
def test_a_forward_within_documents_never_waits_for_the_gpu(name):
    """The layout found on the host and copied without blocking: no host sync in the forward."""
    _, unpadded = doc_models(name)
    host = packed_batch(256, 4, unpad=True, within=True)
    host["unpadded"] = host["unpadded"].pin_memory()
    batch = {k: v.to("cuda", non_blocking=True) for k, v in host.items()}
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = unpadded(**batch).loss
    finally:
        torch.cuda.set_sync_debug_mode(0)
    loss.backward()
    assert torch.isfinite(loss)


def test_modernbert_trains_within_documents_on_cuda(tmp_path):
    """The trainer's bf16 defaults (compile and unpadding) on packed rows of the second layout."""
    data = packed_dir(tmp_path / "data", 256)
    cfg = tmp_path / "modern.json"
    cfg.write_text(json.dumps({"vocab_size": 200, "hidden_size": 128, "num_hidden_layers": 3,
                               "num_attention_heads": 2, "intermediate_size": 256,
                               "max_position_embeddings": 256, "local_attention": 16}))
    out = tmp_path / "run"
    assert main(base_args(data, cfg, out, device="cuda", model_type="modernbert", max_steps=6,
                          optimizer="adamw", learning_rate=1e-3)) == 0
    assert json.loads((out / "hparams.json").read_text())["doc_attention"] == "within"
    losses = [r["loss"] for r in read_log(out) if "loss" in r]
    assert len(losses) == 6 and all(map(torch.isfinite, torch.tensor(losses)))
