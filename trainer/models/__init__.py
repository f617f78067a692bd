"""The registry of model families: the one place where a `--model_type` (or a checkpoint's
"model_type", or a transformers config.json's "model_type") is looked up. Everything else asks
the family (trainer/models/family.py).

    family = get_family("modernbert")      # ModelFamily; ValueError naming the families
    names()                                # ("bert", "modernbert", ...), the choices of --model_type
    family_of_config({"model_type": "xlm-roberta", ...}, "x/config.json")   # "xlm-roberta"
    hf_max_positions(AutoConfig.from_pretrained(folder))   # 512 of a RoBERTa's 514 (fine-tuning)

A new family is one module of trainer/models/ with a `FAMILY` (a ModelFamily; or any name, as
"module:NAME") and one line here (two where transformers knows it by a model_type of its own).
Modules load on first use, so that --help and the flags need neither torch nor transformers.
"""
from __future__ import annotations

import importlib

# --model_type -> (the module holding its FAMILY, or "module:NAME", --help's words)
FAMILIES = {
    "bert": ("trainer.models.bert", "post-norm BERT with MLM + NSP heads (NVIDIA's recipe)"),
    "modernbert": ("trainer.models.modernbert", "transformers' ModernBERT (RoPE, GeGLU, "
                   "local/global attention), MLM only"),
    "roberta": ("trainer.models.roberta:ROBERTA", "transformers' RoBERTa, MLM only"),
    "xlm-roberta": ("trainer.models.roberta:XLM_ROBERTA", "transformers' XLM-RoBERTa (RoBERTa's "
                    "network, exported as XLMRobertaForMaskedLM), MLM only"),
    "distilbert": ("trainer.models.distilbert", "transformers' DistilBERT, MLM only"),
}
DEFAULT = "bert"   # also the family of checkpoints written before meta.json named one

# transformers' config.json "model_type" -> the family that reads, trains and exports it
HF_MODEL_TYPES = {
    "bert": "bert",
    "modernbert": "modernbert",
    "roberta": "roberta",
    "xlm-roberta": "xlm-roberta",
    "distilbert": "distilbert",
}


# transformers' model_types that are no family of ours but count positions by one's rule (RoBERTa's:
# after the padding id): what a fine-tuned model of them takes (hf_max_positions)
HF_POSITION_RULES = {
    "camembert": "roberta",
    "xlm-roberta-xl": "roberta",
}


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
    module, _, attribute = FAMILIES[name][0].partition(":")
    return getattr(importlib.import_module(module), attribute or "FAMILY")


def family_of_config(d: dict, source: str) -> str:
    """The family (its --model_type) of a transformers config.json's keys `d`; ValueError
    naming the architecture and the families when none covers it."""
    model_type = d.get("model_type") if isinstance(d, dict) else None
    if model_type in HF_MODEL_TYPES:
        return HF_MODEL_TYPES[model_type]
    arch = d.get("architectures") if isinstance(d, dict) else None
    what = f"model_type {model_type!r}" if model_type else "no model_type"
    if isinstance(arch, list) and arch:
        what += f" ({', '.join(map(str, arch))})"
    raise ValueError(f"{source}: {what} is not an architecture the trainer has a family for; "
                     f"the families are {', '.join(FAMILIES)} (transformers' model_type "
                     f"{', '.join(HF_MODEL_TYPES)})")


def hf_max_positions(config) -> int:
    """The tokens a row of a transformers model of `config` (its PretrainedConfig) can hold: its
    family's rule (RoBERTa's positions start after the padding id: 514 -> 512), or the rule a
    foreign model_type shares (HF_POSITION_RULES), else max_position_embeddings (512 if none)."""
    model_type = getattr(config, "model_type", None)
    name = HF_MODEL_TYPES.get(model_type) or HF_POSITION_RULES.get(model_type)
    if name is None or getattr(config, "max_position_embeddings", None) is None:
        return int(getattr(config, "max_position_embeddings", 512))
    return int(get_family(name).max_positions(config))

