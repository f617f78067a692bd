"""Where a batch's real tokens are, for a model that unpads (the encoder runs on the real
tokens only, as MosaicBERT and NVIDIA's newer BERT do: trainer/models/varlen.py).

    info = real_tokens(input_mask)             # which of the B x L slots hold real tokens
    info = host_unpadded(input_mask, pin=True) # the same, found on the host by the loader

The tokens of one sequence are consecutive rows of the flattened batch; `cu_seqlens` gives
where each sequence starts, so attention stays within a sequence. `max_seqlen` is L, not the
longest sequence of the batch: an upper bound is all the kernel needs, and a constant keeps
torch.compile from specialising on each batch. The loader adds `host_unpadded` of each batch
(training, evaluation and the budget's timing alike) when the run unpads, so that the number of
real tokens, which shapes the encoder's tensors, is known without waiting for the GPU.
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
