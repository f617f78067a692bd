"""torch.compile an encoder's layers once per kind of layer, for every phase of a run.

    compile_by_kind(model.model.layers, kind=lambda layer: layer.attn.sliding_window,
                    dynamic_from_start=unpadded)

Dynamo keeps its compiled variants per code object, and every layer of a network runs the same
code (nn.Module.compile: all layers share one cache and its recompile_limit, 8). A ModernBERT
layer comes in kinds (the first without an attention norm, the global ones, the local ones whose
window is a Python integer that Dynamo guards: `sliding_window == 65`); each kind, times the
shapes of each sequence-length phase, times train and eval mode, passed 8 on an H200 and the
variants after it ran eager. Here each kind gets a code object of its own (so a cache and a
limit of its own; the layers of a kind share one graph, as regional compilation means), the
window is a constant of its kind's graph, and the shapes go dynamic once, not per phase:

- the first calls of a kind are static (fixed shapes compile to the fastest code: a padded
  run's first phase);
- as soon as a kind sees other shapes (the next phase, an evaluation's batch), every dimension
  of its tensor arguments (of a float tensor but the last, its features; the unpadded layout's
  index tensors and the masks whole) is marked dynamic (`maybe_mark_dynamic`)
  from then on, so one dynamic graph serves every later phase, instead of Dynamo's automatic
  dynamic making one dimension dynamic per recompile;
- `dynamic_from_start`: unpadded rows, whose token count changes every batch, start dynamic.

So a kind compiles at most: static, dynamic, and the same two in eval mode (dropout off).
Parameter names do not change (the layers stay where they are; no "_orig_mod.").
"""
from __future__ import annotations

import dataclasses
import sys
import types
import weakref

import torch


def _run_layer(layer, *args, **kwargs):
    """The body every kind's compiled function has (its code copied per kind: see below)."""
    return layer._call_impl(*args, **kwargs)   # the module's hooks and forward, not its compiled call


def _kind_function(name: str):
    """A function like _run_layer with a code object of its own: Dynamo's cache (and its
    recompile limit) is per code object, so each kind compiles and recompiles apart."""
    qualname = {"co_qualname": name} if sys.version_info >= (3, 11) else {}   # 3.11's field
    code = _run_layer.__code__.replace(co_name=name, **qualname)
    return types.FunctionType(code, _run_layer.__globals__, name)


class _KindCall:
    """A layer's call through its kind's compiled function, marking the shapes dynamic once the
    kind has seen more than one (module docstring)."""

    def __init__(self, layer, state: dict):
        self.layer, self.state = layer, state

    def __call__(self, *args, **kwargs):
        tensors = list(_tensors((*args, *kwargs.values())))
        state = self.state
        if not state["dynamic"]:
            shapes = [tuple(t.shape) for t in tensors]
            state["dynamic"] = state.setdefault("shapes", shapes) != shapes
        if state["dynamic"]:
            # the batch's layout, masks and RoPE tables are the same tensors for every layer of a
            # forward: marked once (by identity: a tensor's == is elementwise)
            marked = state.setdefault("marked", {})
            if len(marked) > 1024:
                marked.clear()
            for t in tensors:
                ref = marked.get(id(t))
                if ref is not None and ref() is t:
                    continue
                marked[id(t)] = weakref.ref(t)
                last = t.dim() - (1 if t.is_floating_point() and t.dim() > 1 else 0)   # features: fixed
                for dim in range(last):
                    torch._dynamo.maybe_mark_dynamic(t, dim)
        return state["compiled"](self.layer, *args, **kwargs)


def _tensors(x):
    """The tensors in `x`: itself, or inside tuples, lists, dicts and dataclasses (RoPE's
    (cos, sin), the unpadded batch's layout)."""
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (tuple, list)):
        for item in x:
            yield from _tensors(item)
    elif isinstance(x, dict):
        for item in x.values():
            yield from _tensors(item)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            yield from _tensors(getattr(x, f.name))


def layer_kinds(layers, kind) -> dict:
    """{kind key: [layers]} in the order the kinds first appear."""
    kinds: dict = {}
    for layer in layers:
        kinds.setdefault((type(layer), kind(layer)), []).append(layer)
    return kinds


def compile_by_kind(layers, kind=lambda layer: None, dynamic_from_start: bool = False,
                    **options) -> list:
    """torch.compile `layers` in place, one compiled function per kind (`kind(layer)`: a
    hashable that tells the kinds apart, the layer's class always does); returns the kinds'
    functions (Dynamo's caches hang on their __code__). `options` go to torch.compile."""
    kinds, functions = layer_kinds(layers, kind), []
    for i, (key, members) in enumerate(kinds.items()):
        fn = _kind_function(f"layer_kind_{i}_{key[0].__name__}")
        functions.append(fn)
        state = {"compiled": torch.compile(fn, **options), "dynamic": dynamic_from_start}
        for layer in members:
            # nn.Module.__call__ runs _compiled_call_impl when set (what Module.compile sets)
            layer._compiled_call_impl = _KindCall(layer, state)
    return functions
