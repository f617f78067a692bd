"""The layout of a batch for a model that unpads: where the real tokens are and which of them
attend to each other (the encoder runs on the real tokens only, as MosaicBERT and NVIDIA's
newer BERT do; the attention is trainer/models/varlen.py).

    info = real_tokens(input_mask)                        # one segment a row (across documents)
    info = real_tokens(input_mask, doc_starts)            # a segment a document (within documents)
    info = host_unpadded(input_mask, doc_starts, pin=True)   # the same, found on the host by the loader

The real tokens of the batch, flattened, are the rows [T, ...] the encoder sees. They are cut
into *segments*: runs of consecutive real tokens that attend to each other and to nothing else.
Without `doc_starts` a segment is a row (today's packed rows, sentence pairs); with it a row is
cut at every mark (`encode --pack`'s doc_starts: position 0 of a row and every document's
[CLS]), so attention stays inside a document. `cu_seqlens` gives where each segment starts, and
`positions` each token's position inside its segment: positions restart at every segment, so a
segment is computed exactly as if it were its own row `[CLS] ... [SEP]`.

`max_seqlen` is L, not the longest segment: an upper bound is all FlashAttention needs, and a
constant keeps torch.compile from specialising on each batch. Where there is no flash kernel
(CPU, fp32) the attention gathers the segments into padded batches: `groups` gives them,
segments of similar length together (lengths within a factor of two, from 64 up), so that a long
document beside many short ones pads the short ones to their own group's width, not to L. They
are held as tensors only (the tokens group by group, each token's segment in its group, and a
table of a fixed shape, on the host, with a row per width bucket): how many groups a batch has
and their sizes change with its documents, and torch.compile must not see them as Python values
(trainer/models/grouped_attention_op.py).

The loader adds `host_unpadded` of each batch (training, evaluation and the budget's timing
alike) when the run unpads, so that the number of real tokens and segments, which shape the
encoder's tensors, are known without waiting for the GPU.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

MIN_GROUP_WIDTH = 64   # segments up to this length share one padded group
FIRST_BUCKET = MIN_GROUP_WIDTH.bit_length() - 1   # log2 of the narrowest group's width bound
WIDTH_BUCKETS = 32   # rows of the groups' table: widths up to 2 ** (FIRST_BUCKET + 31), beyond any row


@dataclass(frozen=True)
class Group:
    """Segments of similar length, gathered for attention without flash into one padded batch
    [segments, width]: token i of the group goes to slot segment[i] * width + its position."""
    rows: torch.Tensor      # [n] the group's tokens (rows of the unpadded [T, ...]), in order
    segment: torch.Tensor   # [n] each token's segment inside the group, 0 .. segments-1
    segments: int
    width: int              # the group's longest segment (its last position + 1)


@dataclass(frozen=True)
class Unpadded:
    indices: torch.Tensor      # [T] flat slots (b * L + i) of the real tokens, ascending
    cu_seqlens: torch.Tensor   # [S + 1] int32: segment s is rows cu[s]:cu[s+1]
    positions: torch.Tensor    # [T] int64: each token's position inside its segment
    batch: int                 # B
    max_seqlen: int            # L: every segment's length is at most this
    group_rows: torch.Tensor     # [T] the tokens group by group (narrowest group first), each in order
    group_segment: torch.Tensor  # [T] each of those tokens' segment inside its group
    group_table: torch.Tensor    # [WIDTH_BUCKETS, 3] int64 on the host: (tokens, segments, width)
                                 # of each width bucket's group, zeros where the batch has none

    @property
    def groups(self) -> tuple[Group, ...]:
        """The segments by length, for attention without flash."""
        return split_groups(self.group_rows, self.group_segment, self.group_table)

    @property
    def longest(self) -> int:
        """The longest segment of the batch (its last position + 1)."""
        return int(self.group_table[:, 2].max())

    @property
    def segments(self) -> int:
        return int(self.group_table[:, 1].sum())

    def to(self, device, non_blocking: bool = False) -> "Unpadded":
        """On `device`, the table excepted: it stays on the host, read there without a sync."""
        move = lambda t: t.to(device, non_blocking=non_blocking)  # noqa: E731
        return Unpadded(move(self.indices), move(self.cu_seqlens), move(self.positions), self.batch,
                        self.max_seqlen, move(self.group_rows), move(self.group_segment), self.group_table)

    def pin_memory(self) -> "Unpadded":
        return Unpadded(self.indices.pin_memory(), self.cu_seqlens.pin_memory(),
                        self.positions.pin_memory(), self.batch, self.max_seqlen,
                        self.group_rows.pin_memory(), self.group_segment.pin_memory(), self.group_table)


def split_groups(rows: torch.Tensor, segment: torch.Tensor, table: torch.Tensor) -> tuple[Group, ...]:
    """The groups of Unpadded's tensors: each bucket's slice of `rows` and `segment` (views)."""
    groups, start = [], 0
    for tokens, segments, width in table.tolist():
        if segments:
            groups.append(Group(rows[start:start + tokens], segment[start:start + tokens], segments, width))
            start += tokens
    return tuple(groups)


def host_unpadded(input_mask: torch.Tensor, doc_starts: torch.Tensor | None = None,
                  pin: bool = False) -> Unpadded:
    """The layout of a batch still on the host (page-locked with `pin`, for a non-blocking
    `.to("cuda", non_blocking=True)`): input_mask [B, L] (1 = real token); `doc_starts` [B, L]
    (1 where a segment starts) or None for one segment a row."""
    real = input_mask.cpu().bool()
    B, L = real.shape
    indices = torch.nonzero(real.reshape(-1)).reshape(-1)
    T = indices.numel()
    row = torch.div(indices, L, rounding_mode="floor")
    starts = torch.ones(T, dtype=torch.bool)           # a row's first real token starts a segment
    starts[1:] = row[1:] != row[:-1]
    if doc_starts is not None:
        starts |= doc_starts.cpu().reshape(-1).index_select(0, indices).bool()
    first = torch.nonzero(starts).reshape(-1)           # [S] each segment's first token
    lengths = torch.diff(first, append=torch.tensor([T]))
    segment = torch.cumsum(starts, 0) - 1               # [T] each token's segment
    # a token's slot in its row minus the slot where its segment starts: a hole in the mask
    # (padding inside a row) keeps the positions of the padded row, as the padded model has them
    positions = indices - indices.index_select(0, first.index_select(0, segment))
    spans = positions.index_select(0, first + lengths - 1) + 1   # [S] last position + 1
    cu = F.pad(torch.cumsum(lengths, 0), (1, 0)).to(torch.int32)
    info = Unpadded(indices, cu, positions, B, L, *_groups(spans, segment))
    return info.pin_memory() if pin else info


def real_tokens(input_mask: torch.Tensor, doc_starts: torch.Tensor | None = None) -> Unpadded:
    """`host_unpadded` on the mask's device (one host sync): for callers outside the trainer,
    whose batches come without the layout the loader finds."""
    return host_unpadded(input_mask, doc_starts).to(input_mask.device)


def _groups(spans: torch.Tensor, segment: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The segments grouped by width (up to MIN_GROUP_WIDTH, then each power of two): Unpadded's
    group_rows, group_segment and group_table."""
    table = torch.zeros(WIDTH_BUCKETS, 3, dtype=torch.int64)
    if not spans.numel():
        none = torch.zeros(0, dtype=torch.int64)
        return none, none, table
    bucket = torch.ceil(torch.log2(spans.double().clamp_min(MIN_GROUP_WIDTH))).long()
    token_bucket = bucket.index_select(0, segment)
    rows_of, segment_of = [], []
    for b in torch.unique(bucket).tolist():
        members = torch.nonzero(bucket == b).reshape(-1)      # the segments, in order
        rank = torch.full_like(bucket, -1)
        rank[members] = torch.arange(members.numel())
        rows = torch.nonzero(token_bucket == b).reshape(-1)
        rows_of.append(rows)
        segment_of.append(rank.index_select(0, segment.index_select(0, rows)))
        table[b - FIRST_BUCKET] = torch.tensor([rows.numel(), members.numel(),
                                                int(spans.index_select(0, members).max())])
    return torch.cat(rows_of), torch.cat(segment_of), table
