"""A hand-made BERT batch with sequences of very different lengths, for the padded vs unpadded
tests (CPU and CUDA)."""
from __future__ import annotations

import torch


def varied_batch(seed=0, seq_len=24, max_pred=4):
    """Lengths from full to 3 tokens; one row has holes in its mask (padding in the middle)."""
    g = torch.Generator().manual_seed(seed)
    lengths = [seq_len, 17, 9, 3, 12]
    B = len(lengths)
    ids = torch.zeros(B, seq_len, dtype=torch.long)
    mask, seg = torch.zeros_like(ids), torch.zeros_like(ids)
    positions = torch.zeros(B, max_pred, dtype=torch.long)
    labels = torch.full((B, max_pred), -1)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(104, 200, (n,), generator=g)
        mask[i, :n] = 1
        seg[i, n // 2:n] = 1
        k = min(max_pred, n - 2)
        positions[i, :k] = torch.randperm(n - 2, generator=g)[:k].sort().values + 1
        labels[i, :k] = torch.randint(104, 200, (k,), generator=g)
    # not a prefix: two holes (never at a masked position) that attention must still skip
    holes = [j for j in range(1, lengths[4]) if j not in positions[4].tolist()][:2]
    mask[4, holes] = 0
    ids[4, holes] = 0
    return dict(input_ids=ids, segment_ids=seg, input_mask=mask, masked_lm_positions=positions,
                masked_lm_labels=labels, next_sentence_labels=torch.tensor([0, 1, 1, 0, 1]))
