"""Attention over unpadded rows (trainer/data/unpadding.py's `Unpadded`): the encoder sees only
the real tokens, and each segment's tokens (a row, or a document of a packed row) attend among
themselves, optionally within a sliding window |q - k| <= window (ModernBERT's local layers).

    out = varlen_attention(q, k, v, info, dropout_p)             # q, k, v: [T, heads, head_dim]
    out = varlen_attention(q, k, v, info, window=64)             # local: |q - k| <= 64
    seq = pad_rows(x, info)                                      # [T, H] back to [B, L, H]

On CUDA, in fp16/bf16 with a head size flash takes, this is FlashAttention's variable-length
kernel (`aten._flash_attention_forward`, the kernel PyTorch's own nested-tensor attention calls;
it has dropout, a backward, and `window_size_left/right` for the local layers): the path a GPU
run takes. Elsewhere (CPU, fp32) it is SDPA over the segments gathered in groups of similar
length, no N x N mask ever built (trainer/models/grouped_attention.py); under torch.compile that
Python loop over the groups, whose number and sizes change with every batch's documents, runs
as one custom operator that the graph does not trace (trainer/models/grouped_attention_op.py),
so a compiled layer never guards on them.
"""
from __future__ import annotations

import torch

from trainer.data.unpadding import Unpadded
from trainer.models.grouped_attention import grouped_attention
from trainer.models.grouped_attention_op import grouped_attention_op


def pad_rows(x: torch.Tensor, info: Unpadded) -> torch.Tensor:
    """[T, ...] rows back into [B, L, ...], zeros at the padding slots."""
    out = x.new_zeros((info.batch * info.max_seqlen, *x.shape[1:]))
    out.index_copy_(0, info.indices, x)   # in place: a fresh tensor, no copy of the zeros
    return out.view(info.batch, info.max_seqlen, *x.shape[1:])


def flash_varlen_usable(q: torch.Tensor) -> bool:
    """FlashAttention takes CUDA fp16/bf16 with a head size that is a multiple of 8, <= 256."""
    d = q.shape[-1]
    return q.is_cuda and q.dtype in (torch.float16, torch.bfloat16) and d % 8 == 0 and d <= 256


def flash_varlen_call(q, k, v, info: Unpadded, dropout_p: float, window: int | None = None,
                      scale: float | None = None) -> torch.Tensor:
    """FlashAttention's variable-length kernel (not causal, no debug mask), [T, h, d]; `window`:
    keys at most that many positions before or after the query."""
    extra = {}
    if window is not None:
        extra.update(window_size_left=window, window_size_right=window)
    if scale is not None:
        extra.update(scale=scale)
    # the positional arguments have kept their order across torch releases; the keyword ones
    # (scale, window sizes) are passed only when asked for
    out = torch.ops.aten._flash_attention_forward(
        q, k, v, info.cu_seqlens, info.cu_seqlens, info.max_seqlen, info.max_seqlen,
        dropout_p, False, False, **extra)
    return out[0]


def varlen_attention(q, k, v, info: Unpadded, dropout_p: float = 0.0, window: int | None = None,
                     scale: float | None = None) -> torch.Tensor:
    """Attention of each segment's tokens among themselves (`window`: only those at most that
    many positions away); q, k, v and the result [T, heads, head_dim]."""
    if flash_varlen_usable(q):
        return flash_varlen_call(q, k, v, info, dropout_p, window, scale)
    if torch.compiler.is_compiling():   # the groups, Python values that change every batch, out of the graph
        return grouped_attention_op(q, k, v, info, dropout_p, window, scale)
    return grouped_attention(q, k, v, info.groups, info.positions, dropout_p, window, scale)


