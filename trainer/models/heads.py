"""The masked-LM head's gather and loss, shared by every family: the head and the vocab-sized
decoder run on the hidden states at the masked slots only (NVIDIA's and MosaicBERT's gather),
the loss in fp32 whatever the autocast dtype.

    hidden = masked_slots(seq, masked_lm_positions)          # [B*P, H]
    labels, loss = masked_lm_loss(decoder(head(hidden)), masked_lm_labels)
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from trainer.models.output import IGNORE


def masked_slots(seq: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """[B, L, H] hidden states -> [B*P, H] at every slot of masked_lm_positions [B, P].

    Padding slots too (they point at position 0 and their loss is ignored): a few percent more
    rows in the head, against a host sync to select the real ones, which would stall the GPU
    each micro-batch."""
    B, L = seq.shape[:2]
    flat = (positions + torch.arange(B, device=seq.device)[:, None] * L).reshape(-1)
    return seq.reshape(B * L, -1).index_select(0, flat)


def masked_lm_loss(slot_logits: torch.Tensor, masked_lm_labels: torch.Tensor | None):
    """(labels [B*P] with IGNORE at padding slots, the mean loss over the real slots), or
    (None, None) without labels. A batch without real slots has loss 0, still in the graph."""
    if masked_lm_labels is None:
        return None, None
    labels = masked_lm_labels.reshape(-1)
    labels = torch.where(labels >= 0, labels, IGNORE)   # -1 (NVIDIA) or -100 (HF)
    total = F.cross_entropy(slot_logits.float(), labels, ignore_index=IGNORE, reduction="sum")
    return labels, total / (labels != IGNORE).sum().clamp_min(1)
