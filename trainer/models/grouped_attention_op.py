"""The attention without flash (trainer/models/grouped_attention.py) as one custom operator,
`wiki2bert::grouped_attention`, for torch.compile:

    out = grouped_attention_op(q, k, v, info, dropout_p, window, scale)   # varlen_attention, compiling

Traced, the loop over a batch's groups of segments puts Python values into the compiled layer's
guards: how many groups (`len(kwargs['doc_layout'].groups) == 3`), each one's segments and
width, whether it is local or global. They change with the documents of every batch, so rows of
real text recompiled the layers batch after batch until Dynamo's recompile limit sent them back
to eager (issue 60: a three-phase ModernBERT run of a real dump on the CPU). As an operator the
graph sees tensors only: q, k, v, the positions and the groups as Unpadded holds them (the
tokens group by group and their segments, [T] like q; the table of a fixed shape, on the host),
and the loop runs eagerly inside, the same code as without compile, whatever the batch.

The operator keeps nothing but its inputs: its backward (a second operator) runs the forward
again with autograd and takes its gradient, one more attention forward a layer. With attention
dropout the forward draws a seed (its second output) and both runs draw their masks from it.
"""
from __future__ import annotations

import contextlib

import torch
from torch import Tensor

from trainer.data.unpadding import Unpadded, split_groups
from trainer.models.grouped_attention import grouped_attention

# the dispatch keys a custom operator's call excludes below it (autograd's): its backward turns
# them back on to differentiate the recomputed forward
_plain = torch._C._dispatch_tls_local_exclude_set()
with torch._C._AutoDispatchBelowADInplaceOrView():
    _below = torch._C._dispatch_tls_local_exclude_set()
AUTOGRAD_KEYS = [key for key in torch._C.DispatchKey.__members__.values() if _below.has(key) and not _plain.has(key)]


def grouped_attention_op(q, k, v, info: Unpadded, dropout_p: float = 0.0, window: int | None = None,
                         scale: float | None = None) -> Tensor:
    """grouped_attention over `info`'s groups as one operator: [T, heads, head_dim]."""
    out, _seed = torch.ops.wiki2bert.grouped_attention(q, k, v, info.positions, info.group_rows,
                                                       info.group_segment, info.group_table,
                                                       dropout_p, window, scale)
    return out


@contextlib.contextmanager
def _seeded(seed: Tensor, device: torch.device, dropout_p: float):
    """The dropout masks of `device` drawn from `seed`, its generator left as it was after."""
    if not dropout_p:
        yield
        return
    cuda = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):
        (torch.cuda.default_generators[cuda[0]] if cuda else torch.default_generator).manual_seed(int(seed))
        yield


def _attend(q, k, v, positions, rows, segment, table, seed, dropout_p, window, scale) -> Tensor:
    with _seeded(seed, q.device, dropout_p):
        return grouped_attention(q, k, v, split_groups(rows, segment, table), positions, dropout_p, window, scale)


@torch.library.custom_op("wiki2bert::grouped_attention", mutates_args=())
def _forward(q: Tensor, k: Tensor, v: Tensor, positions: Tensor, rows: Tensor, segment: Tensor, table: Tensor,
             dropout_p: float, window: int | None, scale: float | None) -> tuple[Tensor, Tensor]:
    seed = torch.randint(1 << 62, (1,)) if dropout_p else torch.zeros(1, dtype=torch.int64)
    return _attend(q, k, v, positions, rows, segment, table, seed, dropout_p, window, scale).contiguous(), seed


@_forward.register_fake
def _(q, k, v, positions, rows, segment, table, dropout_p, window, scale):
    return q.new_empty(q.shape[:-1] + v.shape[-1:]), torch.empty(1, dtype=torch.int64)


@torch.library.custom_op("wiki2bert::grouped_attention_backward", mutates_args=())
def _backward(grad: Tensor, q: Tensor, k: Tensor, v: Tensor, positions: Tensor, rows: Tensor, segment: Tensor,
              table: Tensor, seed: Tensor, dropout_p: float, window: int | None,
              scale: float | None) -> tuple[Tensor, Tensor, Tensor]:
    exclude = torch._C._dispatch_tls_local_exclude_set()
    for key in AUTOGRAD_KEYS:
        exclude = exclude.remove(key)
    with torch._C._ForceDispatchKeyGuard(torch._C._dispatch_tls_local_include_set(), exclude), torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        out = _attend(q, k, v, positions, rows, segment, table, seed, dropout_p, window, scale)
        return tuple(g.contiguous() for g in torch.autograd.grad(out, (q, k, v), grad))


@_backward.register_fake
def _(grad, q, k, v, positions, rows, segment, table, seed, dropout_p, window, scale):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _save(ctx, inputs, output) -> None:
    q, k, v, positions, rows, segment, table, dropout_p, window, scale = inputs
    ctx.save_for_backward(q, k, v, positions, rows, segment, table, output[1])
    ctx.options = (dropout_p, window, scale)


def _gradient(ctx, grad, _seed_grad):
    dq, dk, dv = torch.ops.wiki2bert.grouped_attention_backward(grad, *ctx.saved_tensors, *ctx.options)
    return dq, dk, dv, None, None, None, None, None, None, None


_forward.register_autograd(_gradient, setup_context=_save)
