"""Unpadding: the encoder runs on the real tokens only, as MosaicBERT and NVIDIA's newer BERT do.

    info = real_tokens(input_mask)           # which of the B x L slots hold real tokens
    x = embeddings(ids.flatten()[info.indices], ...)          # [T, H], T = real tokens
    out = varlen_attention(q, k, v, info, dropout_p)         # q, k, v: [T, heads, head_dim]
    seq = pad_rows(x, info)                  # back to [B, L, H], zeros at the padding

The tokens of one sequence are consecutive rows of the flattened batch; `cu_seqlens` gives
where each sequence starts, so attention stays within a sequence. On CUDA, in fp16/bf16,
attention is FlashAttention's variable-length kernel (`aten._flash_attention_forward`, the
kernel PyTorch's own nested-tensor attention calls; it has dropout and a backward). Elsewhere
(CPU, fp32, head sizes flash does not take) q, k and v are scattered back into a padded
[B, heads, L, d] tensor for one masked `scaled_dot_product_attention`: the same result at the
padded cost for attention alone, while the dense layers still see only the real tokens.
`max_seqlen` is L, not the longest sequence of the batch: an upper bound is all the kernel
needs, and a constant keeps torch.compile from specialising on each batch.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Unpadded:
    indices: torch.Tensor      # [T] flat slots (b * L + i) of the real tokens, ascending
    cu_seqlens: torch.Tensor   # [B + 1] int32: sequence b is rows cu[b]:cu[b+1]
    batch: int
    max_seqlen: int            # L
    key_mask: torch.Tensor     # [B, 1, 1, L] bool, for the padded fallback

    def to(self, device, non_blocking: bool = False) -> "Unpadded":
        move = lambda t: t.to(device, non_blocking=non_blocking)  # noqa: E731
        return Unpadded(move(self.indices), move(self.cu_seqlens), self.batch, self.max_seqlen,
                        move(self.key_mask))


def real_tokens(input_mask: torch.Tensor) -> Unpadded:
    """Where the real tokens are (input_mask [B, L], 1 = real); one host sync (nonzero)."""
    B, L = input_mask.shape
    real = input_mask.bool()
    lengths = real.sum(1, dtype=torch.int32)
    cu = F.pad(torch.cumsum(lengths, 0, dtype=torch.int32), (1, 0))
    indices = torch.nonzero(real.reshape(-1)).reshape(-1)
    return Unpadded(indices, cu, B, L, real[:, None, None, :])


def host_unpadded(input_mask: torch.Tensor, pin: bool = False) -> Unpadded:
    """`real_tokens` of a batch's mask while it is still on the host (page-locked with `pin`,
    for a non-blocking `.to("cuda", non_blocking=True)`): the number of real tokens, which
    shapes the encoder's tensors, is then known without waiting for the GPU."""
    info = real_tokens(input_mask.cpu())
    if pin:
        info = Unpadded(info.indices.pin_memory(), info.cu_seqlens.pin_memory(), info.batch,
                        info.max_seqlen, info.key_mask.pin_memory())
    return info


def unpad_extras(batch: dict, pin: bool = False) -> dict:
    """The loader's `extras` for an unpadded model: {"unpadded": host_unpadded(mask)}."""
    return {"unpadded": host_unpadded(batch["input_mask"], pin)}


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
