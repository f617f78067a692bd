"""Weights from elsewhere into a family's model (--init_from): a transformers folder's files or a
run's model.pt, named as the model names them, loaded, and one line saying what was loaded, what
starts fresh and what was left out: nothing is dropped or random without being said.

    state = read_weight_files(files)            # {name: tensor}: safetensors, or torch weights_only
    state = as_model_names(state, model, family.base_prefix)   # bare encoders, old names, tied aliases
    report = fit_weights(model, state)          # loads; ModelFileError when a shape does not fit
    log.info("init_from %s: %s", path, report.line())

Safe: safetensors files hold tensors only, and a torch file is read with weights_only=True
(tensors and plain data: a foreign pickle is refused, never run).
"""
from __future__ import annotations

import pickle
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

from trainer.models.family import ModelFileError


def read_weight_files(files) -> dict:
    """Every tensor of `files` (a folder's shards in order) as one state_dict."""
    state: dict = {}
    for path in map(Path, files):
        try:
            if path.suffix == ".safetensors":
                from safetensors.torch import load_file

                part = load_file(str(path))
            else:
                part = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:
            found = re.search(r"GLOBAL (\S+)|but got (<[^>]+>)", str(exc))
            what = f" (it asks for {found.group(1) or found.group(2)})" if found else ""
            raise ModelFileError(f"{path} holds Python objects other than tensors and plain data{what}: "
                                 "refused, as loading it could run code; weights load as safetensors "
                                 "or as tensors only (torch weights_only)") from None
        except Exception as exc:   # noqa: BLE001  a truncated or damaged file
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            raise ModelFileError(f"cannot read the weights {path} ({type(exc).__name__}: {first}); "
                                 "weights load as safetensors or as tensors only (torch "
                                 "weights_only), never as other Python objects") from None
        if isinstance(part, dict) and isinstance(part.get("model"), dict):
            part = part["model"]
        if not isinstance(part, dict) or not all(isinstance(v, torch.Tensor) for v in part.values()):
            raise ModelFileError(f"{path} does not hold a state_dict of tensors")
        state.update(part)
    return state


def alias_groups(model) -> list[list[str]]:
    """The names of the model's state_dict that are one tensor (a decoder tied to the word
    embeddings and its bias to the head's), in state_dict order."""
    groups: dict = {}
    for name, tensor in model.state_dict().items():
        groups.setdefault((tensor.data_ptr(), tuple(tensor.shape)), []).append(name)
    return [g for g in groups.values() if len(g) > 1]


def as_model_names(state: dict, model, prefix: str) -> dict:
    """`state` under the model's names: a bare encoder's names (BertModel's "embeddings.*") get
    the family's `prefix`; LayerNorm's old gamma/beta become weight/bias; a tensor the model ties
    to others (absent from a safetensors file, which stores it once) is filled from its group;
    integer buffers the model derives itself (position_ids) are dropped."""
    ours = model.state_dict()
    p = prefix + "." if prefix else ""
    if p and not any(k.startswith(p) for k in state) and any(k.startswith(p) for k in ours):
        state = {p + k: v for k, v in state.items()}
    renamed = {}
    for k, v in state.items():
        for old, new in ((".gamma", ".weight"), (".beta", ".bias")):
            if k not in ours and k.endswith(old) and k[: -len(old)] + new in ours:
                k = k[: -len(old)] + new
        if k not in ours and not v.is_floating_point():
            continue
        renamed[k] = v
    for group in alias_groups(model):
        present = [k for k in group if k in renamed]
        if not present:
            continue
        first = renamed[present[0]]
        for k in present[1:]:
            if not torch.equal(renamed[k], first):
                raise ModelFileError(f"{present[0]} and {k} differ in the weights, but the model "
                                     "ties them (one tensor): a model with an untied decoder is not "
                                     "this family's")
        for k in group:
            renamed.setdefault(k, first)
    return renamed


@dataclass
class FitReport:
    loaded: int            # tensors loaded (tied ones once)
    fresh: list[str]       # the model's tensors the weights lack: as the model initialised them
    unused: list[str]      # tensors of the weights the model has no place for

    def line(self) -> str:
        return (f"{self.loaded} tensors loaded; initialised fresh: {group_names(self.fresh) or 'none'}; "
                f"not used: {group_names(self.unused) or 'none'}")


def fit_weights(model, state: dict) -> FitReport:
    """Load `state` (as_model_names') into `model`; what it lacks stays as initialised."""
    ours = model.state_dict()
    wrong = [f"{k} is {list(v.shape)} in the weights, {list(ours[k].shape)} in the model"
             for k, v in state.items() if k in ours and v.shape != ours[k].shape]
    if wrong:
        raise ModelFileError(f"the weights do not fit the model's config ({len(wrong)} of another "
                             f"shape, e.g. {wrong[0]})")
    model.load_state_dict({k: v for k, v in state.items() if k in ours}, strict=False)
    alias = {k: g[0] for g in alias_groups(model) for k in g}
    fresh = [k for k in ours if k not in state and alias.get(k, k) == k]
    loaded = {alias.get(k, k) for k in ours if k in state}
    return FitReport(len(loaded), fresh, [k for k in state if k not in ours])


def group_names(names: list[str]) -> str:
    """"cls.predictions.transform.* (4 tensors), bert.pooler.* (2)": names grouped by the module
    above the layer that holds them (lm_head.dense.weight and lm_head.bias: lm_head.*)."""
    counts = Counter()
    for name in names:
        parts = name.split(".")
        counts[".".join(parts[: max(1, len(parts) - 2)]) + ".*" if len(parts) > 1 else name] += 1
    items = [f"{g} ({n}{' tensors' if i == 0 else ''})" for i, (g, n) in enumerate(counts.items())]
    return ", ".join(items)
