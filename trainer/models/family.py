"""What a model family tells the trainer: the one interface that set-up, evaluation, export and the
model card ask, so that none of them compares model-type strings (trainer/models/__init__.py maps
`--model_type` to a family; each family is one module of trainer/models/ with a `FAMILY`).

    family = get_family("modernbert")
    config = family.read_config_file("trainer/configs/modernbert_tiny.json")
    model = family.build(config, unpad=False, nsp=False)
    n_params = family.export(weights, config, vocab_spec, folder)   # a transformers folder

A family's model takes the trainer's batch (input_ids, segment_ids, input_mask,
masked_lm_positions, masked_lm_labels, next_sentence_labels; `unpadded` where the family unpads)
and returns trainer.models.output.PretrainingOutput.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


class ModelFileError(ValueError):
    """A model config or weights that do not fit the family; the message says which and why."""


@dataclass(frozen=True)
class CardText:
    """What the model card says of the architecture."""
    arch: str          # "BERT"
    hf_class: str      # the transformers class the card's example loads
    heads: str         # the pretraining heads, in words
    load_note: str     # extra comment lines under the card's code sample ("" for none)


class ModelFamily:
    """The base of every family; subclasses set the attributes and implement the methods."""

    name: str                    # --model_type, and "model_type" in a checkpoint's meta.json
    display_name: str            # in messages: "BERT", "ModernBERT"
    example_config: str          # a shipped model JSON, named in errors
    has_nsp: bool                # a next-sentence head (the 2019 objective)
    unpads: bool                 # takes unpadded batches (trainer/data/unpadding.py)
    named_in_objective: bool = True   # the objective line names the family (not for the default)

    # -- config ---------------------------------------------------------------------------
    def read_config(self, d: dict, source: str):
        """The family's config from a model JSON's keys; ValueError naming `source` and the key."""
        raise NotImplementedError

    def read_config_file(self, path: str | os.PathLike):
        """The model JSON file `path` as the family's config."""
        return self.read_config(read_model_json(path, f"--model_config {self.example_config}"),
                                source=str(path))

    def config_dict(self, config) -> dict:
        """The config as JSON-able keys (a checkpoint's meta.json, the run's bert_config.json)."""
        return {k: v for k, v in config.to_dict().items() if not k.startswith("_")}

    def max_positions(self, config) -> int:
        return config.max_position_embeddings

    def vocab_size(self, config) -> int:
        return config.vocab_size

    # -- model ----------------------------------------------------------------------------
    def build(self, config, *, unpad: bool, nsp: bool):
        """A model with random weights (seeded by the caller); `nsp` False: MLM only."""
        raise NotImplementedError

    def compile(self, model) -> None:
        """torch.compile the encoder layers in place (parameter names unchanged)."""
        raise NotImplementedError

    # -- export ---------------------------------------------------------------------------
    def export(self, weights: dict, config, spec, folder: Path) -> int:
        """Write the transformers model files (config.json, model.safetensors, and whatever its
        tokenizer needs beyond vocab.txt + tokenizer_config.json) into `folder` from a
        checkpoint's `weights`; returns the parameter count. ModelFileError when they do not fit."""
        raise NotImplementedError

    def card(self, no_nsp: bool) -> CardText:
        raise NotImplementedError


def read_model_json(path: str | os.PathLike, example: str):
    """A model JSON file's object; one ValueError naming the file when missing or not JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise ValueError(f"model config {path} not found: pass {example} or your own") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"model config {path} is not valid JSON: {e}") from None


def require_keys(d, keys, source: str, what: str, example: str) -> None:
    """ValueError naming `source` unless `d` is a dict holding every key of `keys`."""
    if not isinstance(d, dict):
        raise ValueError(f"{source}: expected a JSON object with {', '.join(keys)}")
    missing = [k for k in keys if k not in d]
    if missing:
        raise ValueError(f"{source}: missing key(s) {', '.join(missing)}; {what} needs "
                         f"{', '.join(keys)} (see {example})")


def state_dict_mismatch(expected: dict, got: dict, tied: tuple[str, ...] = ()) -> str:
    """'' when `got` fits `expected`, else a short summary with one example of each problem;
    the `tied` names may be missing (they alias another tensor)."""
    missing = [k for k in expected if k not in got and k not in tied]
    unexpected = [k for k in got if k not in expected]
    shapes = [f"{k} {list(got[k].shape)} vs {list(v.shape)}" for k, v in expected.items()
              if k in got and hasattr(got[k], "shape") and got[k].shape != v.shape]
    parts = [f"{len(xs)} {what}, e.g. {xs[0]}" for xs, what in
             ((missing, "missing"), (unexpected, "unexpected"), (shapes, "of another shape"))
             if xs]
    return "; ".join(parts)


def save_safetensors(state: dict, path: Path) -> None:
    """model.safetensors; a full disk is the OSError it stands for (one Error line upstream)."""
    from safetensors.torch import save_file

    from common.os_errors import as_os_error

    try:
        save_file(state, str(path), metadata={"format": "pt"})
    except Exception as exc:  # noqa: BLE001  safetensors' own error for a full disk
        fault = as_os_error(exc, path)
        if fault is exc:
            raise
        raise fault from None
