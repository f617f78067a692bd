"""The attention without flash as one custom operator (trainer/models/grouped_attention_op.py):
the eager attention's values and gradients exactly, the same dropout masks in its backward as in
its forward, and under torch.compile one graph for batches of any number of groups of documents
(traced, each new number recompiled: `len(kwargs['doc_layout'].groups) == 3`)."""
from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

from tests.helpers.doc_attention import ROWS, dense_reference, layout
from trainer.models.grouped_attention import grouped_attention
from trainer.models.grouped_attention_op import grouped_attention_op
from trainer.models.varlen import varlen_attention

pytestmark = pytest.mark.usefixtures("one_thread")
# rows of 64 tokens whose documents fall in 1, 2, 3 and 4 groups by length (up to 64, 128, ...)
LAYOUTS = [([[64], [30, 34]], 64), ([[100, 28], [64, 64]], 128), ([[20, 100, 136], [256]], 256),
           ([[10, 100, 200, 202], [512]], 512)]


def qkv(T: int, dtype=torch.float64, seed: int = 0):
    torch.manual_seed(seed)
    return [torch.randn(T, 2, 8, dtype=dtype, requires_grad=True) for _ in range(3)]


@pytest.mark.parametrize("window", [None, 3, 40])
def test_the_operator_gives_the_eager_attention_and_its_gradients(window):
    info = layout(ROWS, 100)
    q, k, v = qkv(info.indices.numel())
    want = grouped_attention(q, k, v, info.groups, info.positions, window=window)
    got = grouped_attention_op(q, k, v, info, window=window)
    assert torch.equal(got, want)
    w = torch.randn_like(want)
    for a, b in zip(torch.autograd.grad((got * w).sum(), (q, k, v)), torch.autograd.grad((want * w).sum(), (q, k, v))):
        assert torch.equal(a, b)


def test_with_dropout_the_backward_recomputes_the_forwards_masks():
    """The forward draws a seed; the backward's recomputation draws the same masks from it (a
    gradient of other masks would not match the output's)."""
    info = layout(ROWS, 100)
    q, k, v = qkv(info.indices.numel())
    out, seed = torch.ops.wiki2bert.grouped_attention(q, k, v, info.positions, info.group_rows, info.group_segment,
                                                      info.group_table, 0.3, None, None)
    w = torch.randn_like(out)
    got = torch.autograd.grad((out * w).sum(), (q, k, v))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        want = grouped_attention(q, k, v, info.groups, info.positions, 0.3)
    assert torch.equal(out, want) and not torch.allclose(out, dense_reference(q, k, v, info, None))
    for a, b in zip(got, torch.autograd.grad((want * w).sum(), (q, k, v))):
        assert torch.equal(a, b)


def test_compiled_attention_takes_any_number_of_groups_without_recompiling():
    """One graph (Dynamo's first compile, then every T dynamic) for four batches of 1, 2, 3 and 4
    groups; each batch's output and gradients those of the dense reference."""
    torch._dynamo.reset()
    counters.clear()
    attend = torch.compile(lambda q, k, v, info: varlen_attention(q * 2, k, v, info, window=8), dynamic=True)
    for rows, L in LAYOUTS:
        info = layout(rows, L)
        q, k, v = qkv(info.indices.numel(), torch.float32, seed=L)
        got = attend(q, k, v, info)
        want = dense_reference(q * 2, k, v, info, 8)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        for a, b in zip(torch.autograd.grad(got.sum(), (q, k, v)), torch.autograd.grad(want.sum(), (q, k, v))):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert [len(layout(rows, L).groups) for rows, L in LAYOUTS] == [1, 2, 3, 4]
    assert counters["frames"]["total"] == 1, dict(counters["frames"])
