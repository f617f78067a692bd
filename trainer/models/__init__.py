"""The registry of model families: the one place where a `--model_type` (or a checkpoint's
"model_type") is looked up. Everything else asks the family (trainer/models/family.py).

    family = get_family("modernbert")      # ModelFamily; ValueError naming the families
    names()                                # ("bert", "modernbert"), the choices of --model_type

A new family is one module of trainer/models/ with a `FAMILY` (a ModelFamily) and one line
here. Modules load on first use, so that --help and the flags need neither torch nor
transformers.
"""
from __future__ import annotations

import importlib

# --model_type -> (the module holding its FAMILY, --help's words)
FAMILIES = {
    "bert": ("trainer.models.bert", "post-norm BERT with MLM + NSP heads (NVIDIA's recipe)"),
    "modernbert": ("trainer.models.modernbert", "transformers' ModernBERT (RoPE, GeGLU, "
                   "local/global attention), MLM only (needs --no_nsp)"),
}
DEFAULT = "bert"   # also the family of checkpoints written before meta.json named one


def names() -> tuple[str, ...]:
    return tuple(FAMILIES)


def describe() -> str:
    """--model_type's help: each family and what it is."""
    return "; ".join(f"{name}: {words}" for name, (_, words) in FAMILIES.items())


def get_family(name: str | None):
    """The ModelFamily registered as `name` (None: the default)."""
    name = DEFAULT if name is None else name
    if name not in FAMILIES:
        raise ValueError(f"model type {name!r} is not one of the families "
                         f"{', '.join(FAMILIES)}")
    return importlib.import_module(FAMILIES[name][0]).FAMILY
