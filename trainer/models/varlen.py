"""Attention over unpadded rows (trainer/data/unpadding.py's `Unpadded`): the encoder sees only
the real tokens, attention stays within each sequence.

    out = varlen_attention(q, k, v, info, dropout_p)   # q, k, v: [T, heads, head_dim]
    seq = pad_rows(x, info)                            # [T, H] back to [B, L, H], zeros at padding

On CUDA, in fp16/bf16, attention is FlashAttention's variable-length kernel
(`aten._flash_attention_forward`, the kernel PyTorch's own nested-tensor attention calls; it has
dropout and a backward). Elsewhere (CPU, fp32, head sizes flash does not take) q, k and v are
scattered back into a padded [B, heads, L, d] tensor for one masked
`scaled_dot_product_attention`: the same result at the padded cost for attention alone, while
the dense layers still see only the real tokens.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from trainer.data.unpadding import Unpadded


def pad_rows(x: torch.Tensor, info: Unpadded) -> torch.Tensor:
    """[T, ...] rows back into [B, L, ...], zeros at the padding slots."""
    out = x.new_zeros((info.batch * info.max_seqlen, *x.shape[1:]))
    out = out.index_copy(0, info.indices, x)
    return out.view(info.batch, info.max_seqlen, *x.shape[1:])


def flash_varlen_usable(q: torch.Tensor) -> bool:
    """FlashAttention takes CUDA fp16/bf16 with a head size that is a multiple of 8, <= 256."""
    d = q.shape[-1]
    return q.is_cuda and q.dtype in (torch.float16, torch.bfloat16) and d % 8 == 0 and d <= 256


def flash_varlen_call(q, k, v, info: Unpadded, dropout_p: float) -> torch.Tensor:
    """FlashAttention's variable-length kernel (not causal, no debug mask), [T, h, d]."""
    # positional arguments only: the keyword ones changed between torch releases
    out = torch.ops.aten._flash_attention_forward(
        q, k, v, info.cu_seqlens, info.cu_seqlens, info.max_seqlen, info.max_seqlen,
        dropout_p, False, False)
    return out[0]


def varlen_attention(q, k, v, info: Unpadded, dropout_p: float = 0.0) -> torch.Tensor:
    """Attention of each sequence's tokens among themselves; q, k, v and the result [T, h, d]."""
    if flash_varlen_usable(q):
        return flash_varlen_call(q, k, v, info, dropout_p)
    B, L = info.batch, info.max_seqlen

    def padded(t):  # [T, h, d] -> [B, h, L, d]
        return pad_rows(t, info).transpose(1, 2)

    out = F.scaled_dot_product_attention(padded(q), padded(k), padded(v),
                                         attn_mask=info.key_mask, dropout_p=dropout_p)
    return out.transpose(1, 2).reshape(B * L, *q.shape[1:]).index_select(0, info.indices)
