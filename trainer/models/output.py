"""What every family's forward returns from the trainer's batch: losses, the logits of every
masked slot, and the next-sentence logits where the model has that head (None where not).

    out = model(**batch); out.loss.backward(); out.mlm_logits, out.mlm_labels   # real slots only
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

IGNORE = -100  # the label of a padding slot of masked_lm_positions, after the model's reading


@dataclass
class PretrainingOutput:
    loss: torch.Tensor | None          # mlm_loss + nsp_loss (those whose labels were given)
    mlm_loss: torch.Tensor | None
    nsp_loss: torch.Tensor | None
    slot_logits: torch.Tensor          # [B*P, V]: every slot of masked_lm_positions
    slot_labels: torch.Tensor | None   # [B*P]: IGNORE at the padding slots
    nsp_logits: torch.Tensor | None    # [B, 2]; None: no next-sentence head trained or present

    # Selecting the real slots by a mask makes the host wait for the GPU, so it happens only
    # when these are read (evaluation, tests), never in a training step.
    @property
    def mlm_logits(self) -> torch.Tensor:
        """[M, V] at the real masked slots ([B*P, V] when no labels were given)."""
        if self.slot_labels is None:
            return self.slot_logits
        return self.slot_logits[self.slot_labels != IGNORE]

    @property
    def mlm_labels(self) -> torch.Tensor | None:
        """[M] the original ids at the real masked slots."""
        if self.slot_labels is None:
            return None
        return self.slot_labels[self.slot_labels != IGNORE]
