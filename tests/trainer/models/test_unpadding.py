"""Unpadding (trainer/data/unpadding.py, trainer/models/varlen.py, BertForPreTraining(unpad=True), --unpad):
the encoder on the real tokens only gives the padded model's logits, losses and gradients, and the trainer's losses."""
from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from tests.helpers.bert_batches import varied_batch
from tests.helpers.trainer_cli import base_args, read_log
from trainer.data.unpadding import host_unpadded, real_tokens
from trainer.models.bert_network import BertConfig, BertForPreTraining
from trainer.models.varlen import flash_varlen_call, pad_rows, varlen_attention
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = dict(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=64, type_vocab_size=2)


def test_real_tokens_and_pad_rows():
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 1]])
    info = real_tokens(mask)
    assert info.indices.tolist() == [0, 1, 2, 4, 8, 9, 11]
    assert info.cu_seqlens.tolist() == [0, 3, 4, 7] and info.cu_seqlens.dtype == torch.int32
    assert (info.batch, info.max_seqlen) == (3, 4)
    rows = torch.arange(1, 8, dtype=torch.float32)[:, None].repeat(1, 2)   # [T=7, 2]
    padded = pad_rows(rows, info)
    assert padded.shape == (3, 4, 2)
    assert padded[..., 0].tolist() == [[1, 2, 3, 0], [4, 0, 0, 0], [5, 6, 0, 7]]


def test_varlen_attention_attends_within_each_sequence():
    """The fallback (CPU) against an independent reference: each sequence alone, no mask."""
    lengths, heads, d = [5, 1, 3], 2, 4
    info = real_tokens(torch.tensor([[1] * n + [0] * (6 - n) for n in lengths]))
    q, k, v = torch.randn(3, sum(lengths), heads, d).unbind(0)
    out = varlen_attention(q, k, v, info)
    start = 0
    for n in lengths:
        s = slice(start, start + n)
        ref = F.scaled_dot_product_attention(*(t[s].transpose(0, 1) for t in (q, k, v)))
        torch.testing.assert_close(out[s], ref.transpose(0, 1))
        start += n


@pytest.mark.parametrize("window", [None, 2])
def test_the_flash_varlen_call_matches_the_kernels_signature(window):
    """The CUDA kernel cannot run here; its meta version checks our arguments (order, types,
    shapes, the window and scale keywords) and that it has a backward. On CUDA, test_cuda.py
    compares its values."""
    info = real_tokens(torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]])).to("meta")
    q = torch.randn(5, 2, 8, device="meta", dtype=torch.bfloat16, requires_grad=True)
    out = flash_varlen_call(q, q, q, info, 0.1, window=window, scale=0.5)
    assert out.shape == (5, 2, 8)
    out.sum().backward()
    assert q.grad.shape == q.shape


@pytest.mark.parametrize("train", [False, True])
def test_unpadded_model_gives_the_padded_logits_losses_and_gradients(train):
    """eval mode, and train mode with dropout 0 (dropout masks come from different random
    streams on the two paths, so with dropout they agree in distribution only)."""
    config = BertConfig(**TINY, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    padded = BertForPreTraining(config).train(train)
    unpadded = BertForPreTraining(config, unpad=True).train(train)
    unpadded.load_state_dict(padded.state_dict())
    b = varied_batch()
    a, u = padded(**b), unpadded(**b)
    torch.testing.assert_close(u.mlm_logits, a.mlm_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(u.nsp_logits, a.nsp_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(u.loss, a.loss, rtol=1e-6, atol=1e-6)
    a.loss.backward()
    u.loss.backward()
    for (name, p), q in zip(padded.named_parameters(), unpadded.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=name)


def test_real_tokens_found_on_the_host_give_the_same_outputs():
    """The trainer hands the model `host_unpadded(mask)` (no GPU sync): the same as the model's own."""
    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(**TINY), unpad=True).eval()
    b = varied_batch()
    info = host_unpadded(b["input_mask"])
    assert torch.equal(info.indices, real_tokens(b["input_mask"]).indices)
    own, given = model(**b), model(**b, unpadded=info)
    torch.testing.assert_close(given.mlm_logits, own.mlm_logits, rtol=0, atol=0)
    torch.testing.assert_close(given.loss, own.loss, rtol=0, atol=0)


def test_trainer_with_unpad_gives_the_same_losses(tiny_shards, tmp_path):
    """A few steps of --unpad: the losses of the padded run (no dropout: see above)."""
    cfg = tmp_path / "bert_nodrop.json"
    cfg.write_text(json.dumps({**TINY, "hidden_dropout_prob": 0.0,
                               "attention_probs_dropout_prob": 0.0}))
    runs = {}
    for flag in (False, True):
        out = tmp_path / f"unpad_{flag}"
        assert main(base_args(tiny_shards, cfg, out, unpad=flag, max_steps=4,
                              checkpoint_every=100)) == 0
        runs[flag] = [r["loss"] for r in read_log(out) if "loss" in r]
    assert len(runs[True]) == 4
    assert runs[True] == pytest.approx(runs[False], abs=1e-5)
    assert json.loads((tmp_path / "unpad_True" / "hparams.json").read_text())["unpad"] is True
