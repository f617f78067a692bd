"""trainer/models/varlen.py without flash (CPU): segments gathered by length for global attention,
blocks with a [c, 3c] band for local attention, against a dense masked attention over all the
tokens (the N x N mask the CPU path never builds), values and gradients, at segment edges, for
segments shorter than the window, and at blocks of every size; a tiny model's training step at
2,048 tokens builds no L x L tensor and fits in little memory."""
from __future__ import annotations

import copy

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from tests.helpers.doc_attention import ROWS, dense_reference, layout, measure_step, packed_batch, tiny_config
from trainer.data.unpadding import host_unpadded
from trainer.models.varlen import varlen_attention

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("window", [None, 1, 3, 8, 33, 99, 200])
@pytest.mark.parametrize("block", [None, 2, 8, "chunks"])
def test_cpu_attention_equals_the_dense_masked_reference(window, block, monkeypatch):
    """`block`: blocks as small as the window allows (many blocks a segment); "chunks": the
    queries in chunks of 300 scores, as with attention dropout (a dropout of 1e-12, which drops
    nothing here, takes that path)."""
    dropout = 0.0
    if block == "chunks":
        monkeypatch.setattr("trainer.models.grouped_attention.SCORES_AT_ONCE", 300)
        dropout = 1e-12
    elif block is not None:
        monkeypatch.setattr("trainer.models.grouped_attention.MIN_BLOCK", block)
    info = layout(ROWS, 100)
    assert len(info.groups) == 2 and info.longest == 100
    torch.manual_seed(0)
    T = info.indices.numel()
    q, k, v = (torch.randn(T, 3, 8, dtype=torch.float64, requires_grad=True) for _ in range(3))
    got = varlen_attention(q, k, v, info, dropout_p=dropout, window=window)
    want = dense_reference(q, k, v, info, window)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    w = torch.randn_like(want)   # gradients of a loss that weighs every output differently
    for a, b in zip(torch.autograd.grad((got * w).sum(), (q, k, v)),
                    torch.autograd.grad((want * w).sum(), (q, k, v))):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_a_scale_and_dropout_reach_the_attention():
    info = layout(ROWS, 100)
    T = info.indices.numel()
    q, k, v = (torch.randn(T, 2, 8, dtype=torch.float64) for _ in range(3))
    scaled = varlen_attention(q, k, v, info, window=3, scale=0.1)
    torch.testing.assert_close(scaled, dense_reference(q * 0.1 * 8 ** 0.5, k, v, info, 3))
    torch.manual_seed(0)
    dropped = varlen_attention(q, k, v, info, dropout_p=0.5, window=3)
    assert not torch.allclose(dropped, varlen_attention(q, k, v, info, window=3))


def test_rows_of_one_segment_each_and_holes_in_a_row():
    """Without doc_starts a segment is a row; a hole in the mask (padding inside a row) keeps
    the row's positions, so the window counts them as the padded model does."""
    mask = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 0, 1, 1, 0, 0]])
    info = host_unpadded(mask)
    assert info.cu_seqlens.tolist() == [0, 5, 8]
    assert info.positions.tolist() == [0, 1, 2, 3, 4, 0, 2, 3]
    assert (info.batch, info.max_seqlen, info.longest) == (2, 6, 5)
    q, k, v = (torch.randn(8, 1, 4, dtype=torch.float64) for _ in range(3))
    torch.testing.assert_close(varlen_attention(q, k, v, info, window=1),
                               dense_reference(q, k, v, info, 1))


class Largest(TorchDispatchMode):
    """The most elements of any tensor an operation returns while the mode is on."""

    def __init__(self):
        super().__init__()
        self.numel = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.numel = max(self.numel, t.numel())
        return out


@pytest.mark.parametrize("name", ["bert", "modernbert"])
def test_a_training_step_at_2048_tokens_never_builds_an_L_by_L_tensor(name):
    """Forward and backward of two packed rows of 2,048 within documents (BERT with its attention
    dropout, which sends CPU attention to its math kernel: taken in chunks of queries): no
    operation returns L x L elements. The padded path does (the check can fail)."""
    L = 2048
    extra = dict(local_attention=128) if name == "modernbert" else {}
    family, config = tiny_config(name, L, **extra)
    for unpad in (True, False):
        model = family.build(copy.deepcopy(config), unpad=unpad, nsp=False).train()
        batch = packed_batch(L, 2, unpad=unpad)
        with Largest() as seen:
            model(**batch).loss.backward()
        assert (seen.numel < L * L) == unpad, (unpad, seen.numel)


@pytest.mark.slow
@pytest.mark.parametrize("name, seq_len, rows, mode", [("modernbert", 2048, 4, "train"),
                                                      ("bert", 2048, 4, "train"),
                                                      ("modernbert", 8192, 1, "forward")])
def test_long_rows_fit_in_little_memory(name, seq_len, rows, mode):
    """The peak memory of one step on CPU, in a process of its own (loosely: the process's own
    peak RSS). Measured: 0.14 / 0.23 GB for 4 x 2,048 (ModernBERT / BERT, 3 layers of width 32),
    0.05 GB for a forward of 8,192; the padded path 0.22 / 1.4 / 1.0 GB."""
    got = measure_step(name, seq_len, rows, mode, unpad=True)
    assert got["growth_mb"] < 500, got
