"""Attention without flash (CPU, fp32) over unpadded rows: each segment's tokens (a row, or a
document of a packed row) among themselves, optionally within a sliding window |q - k| <= window,
no N x N mask ever built. The segments come in groups of similar length (trainer/data/
unpadding.py's `groups`):

    out = grouped_attention(q, k, v, info.groups, info.positions, dropout_p, window, scale)

- global attention: the segments are gathered into padded batches [segments, width], a group
  at a time, for one `scaled_dot_product_attention` each with a key mask [segments, 1, 1, width]
  (CPU's memory-efficient kernel);
- local attention: a group wider than BAND_MASK_WIDTH blocks is cut into blocks of
  c = max(window, MIN_BLOCK) tokens, and every block attends to itself and its two neighbours
  under a [c, 3c] band mask, so a local layer costs O(T * window), not O(L^2); a narrower group
  takes one SDPA under a [width, width] band, and one whose segments fit in the window is global;
- attention dropout sends CPU's SDPA to its math kernel, which keeps every probability for the
  backward: the queries then go in chunks, each recomputed in the backward (`_sdpa`).

Padding slots of a group hold a copy of a real row (finite, masked out as keys, their outputs
dropped, their gradient 0); as queries they may look at anything in their band, so no softmax
row is empty (an empty one is NaN, whose gradient would reach the real keys).

The loop over the groups is Python that changes with every batch: under torch.compile it runs as
one operator (trainer/models/grouped_attention_op.py), not traced.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from trainer.data.unpadding import Group

MIN_BLOCK = 32   # the local blocks' least size: smaller ones cost more in overhead than they save
BAND_MASK_WIDTH = 4       # local groups at most this many blocks wide: one SDPA with a band mask
SCORES_AT_ONCE = 1 << 21   # with dropout: attention scores computed at once (8 MB in fp32)


def grouped_attention(q, k, v, groups: tuple[Group, ...], positions: torch.Tensor, dropout_p: float = 0.0,
                      window: int | None = None, scale: float | None = None) -> torch.Tensor:
    """Attention of each segment's tokens among themselves (`window`: only those at most that
    many positions away), group by group; q, k, v and the result [T, heads, head_dim]."""
    if window is not None and window + 1 >= max((g.width for g in groups), default=0):
        window = None                          # every segment fits in the window: plain attention
    parts = [(_local if window is not None and g.width > BAND_MASK_WIDTH * _block(window) else _global)(
        q, k, v, g, positions, dropout_p, window, scale) for g in groups]
    if len(parts) == 1:                        # one group: all the rows, in order
        return parts[0][1]
    out = q.new_empty(q.shape[:-1] + v.shape[-1:])
    for rows, part in parts:
        out.index_copy_(0, rows, part)   # the groups' rows cover every row once
    return out


def _padding(g: Group, positions: torch.Tensor, width: int):
    """(slots, sources, present) of the group padded to [segments, width]: token i goes to slot
    slots[i]; slot s is read from row sources[s] of the unpadded tensors (a slot without a token
    reads the group's first row: any finite value serves, the masks keep it out and its gradient
    is 0); present[s] says whether a token is there."""
    slots = g.segment * width + positions.index_select(0, g.rows)
    n = g.segments * width
    sources = g.rows[:1].expand(n).clone().index_copy_(0, slots, g.rows)
    present = torch.zeros(n, dtype=torch.bool, device=slots.device).index_fill_(0, slots, True)
    return slots, sources, present.view(g.segments, width)


def _gather(x: torch.Tensor, sources: torch.Tensor, segments: int) -> torch.Tensor:
    """x [T, heads, d] at `sources`, as [segments, heads, width, d]: one gather."""
    return x.index_select(0, sources).view(segments, -1, *x.shape[1:]).transpose(1, 2)


def _global(q, k, v, g: Group, positions, dropout_p, window, scale):
    """(the group's rows, their output): one SDPA over its segments, padded to its width; with a
    `window`, under a [width, width] band mask (for groups narrow enough that blocks gain
    nothing)."""
    slots, sources, present = _padding(g, positions, g.width)
    mask = present[:, None, None, :]
    if window is not None and window + 1 < g.width:
        i = torch.arange(g.width, device=q.device)
        band = (i[:, None] - i[None, :]).abs() <= window
        mask = band & (mask | ~mask.transpose(2, 3))   # padding queries: anything in their band
    out = _sdpa(*(_gather(t, sources, g.segments) for t in (q, k, v)), mask, dropout_p, scale)
    h, d = out.shape[1], out.shape[-1]
    return g.rows, out.transpose(1, 2).reshape(g.segments * g.width, h, d).index_select(0, slots)


def _sdpa(q, k, v, mask, dropout_p: float, scale):
    """scaled_dot_product_attention of [N, heads, n, d] under a mask [N, 1, 1 or n, n]. With
    dropout CPU's SDPA takes its math kernel, which keeps the [N, heads, n, n] probabilities for
    the backward (0.9 GB for 4 rows of 2,048 in a tiny BERT): then the queries go in chunks of
    at most SCORES_AT_ONCE scores, each recomputed in the backward (torch.utils.checkpoint, the
    same dropout mask), so only one chunk's scores exist at a time."""
    N, h, n = q.shape[:3]
    if not dropout_p or N * h * n * k.shape[2] <= SCORES_AT_ONCE:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)
    step = max(1, SCORES_AT_ONCE // (N * h * k.shape[2]))
    chunks = []
    for i in range(0, n, step):
        rows = mask if mask.shape[2] == 1 else mask[:, :, i:i + step]
        chunks.append(checkpoint(F.scaled_dot_product_attention, q[:, :, i:i + step], k, v,
                                 attn_mask=rows, dropout_p=dropout_p, scale=scale, use_reentrant=False))
    return torch.cat(chunks, dim=2)


def _block(window: int) -> int:
    """The local blocks' size: at least the window, so that two neighbours hold every key."""
    return max(window, MIN_BLOCK)


def _local(q, k, v, g: Group, positions, dropout_p, window, scale):
    """(the group's rows, their output): banded attention |q - k| <= window inside each segment,
    in blocks of c >= window tokens that see their two neighbours."""
    c = _block(window)
    nb = -(-g.width // c)                                   # blocks a segment
    width = nb * c
    slots, sources, present = _padding(g, positions, width)
    present = present.view(g.segments, nb, c)

    def blocks(t):      # [segments, heads, width, d] -> [segments * nb, heads, c, d]
        h, d = t.shape[1], t.shape[-1]
        return t.view(g.segments, h, nb, c, d).transpose(1, 2).reshape(g.segments * nb, h, c, d)

    def neighbours(t):  # each block with the one before and after: [segments * nb, heads, 3c, d]
        h, d = t.shape[1], t.shape[-1]
        t = F.pad(t.view(g.segments, h, nb, c, d), (0, 0, 0, 0, 1, 1))
        t = torch.cat((t[:, :, :-2], t[:, :, 1:-1], t[:, :, 2:]), dim=3)
        return t.transpose(1, 2).reshape(g.segments * nb, h, 3 * c, d)

    qb = blocks(_gather(q, sources, g.segments))
    kb, vb = (neighbours(_gather(t, sources, g.segments)) for t in (k, v))
    # query r of block i is at i*c + r; key j of its window at (i-1)*c + j: the band is the same
    # for every block
    r = torch.arange(c, device=q.device)
    j = torch.arange(3 * c, device=q.device)
    band = (r[:, None] + c - j[None, :]).abs() <= window                       # [c, 3c]
    keys = F.pad(present, (0, 0, 1, 1))                                        # [S, nb + 2, c]
    keys = torch.cat((keys[:, :-2], keys[:, 1:-1], keys[:, 2:]), dim=2)        # [S, nb, 3c]
    mask = band & (keys[:, :, None, :] | ~present[..., None])                  # [S, nb, c, 3c]
    out = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask.view(-1, 1, c, 3 * c),
                                         dropout_p=dropout_p, scale=scale)
    h, d = out.shape[1], out.shape[-1]
    out = out.view(g.segments, nb, h, c, d).transpose(2, 3).reshape(g.segments * width, h, d)
    return g.rows, out.index_select(0, slots)
