"""What a model family tells the trainer: the one interface that set-up, evaluation, export and the
model card ask, so that none of them compares model-type strings (trainer/models/__init__.py maps
`--model_type` to a family; each family is one module of trainer/models/ with a `FAMILY`).

    family = get_family("modernbert")
    config = family.read_config_file("trainer/configs/modernbert_tiny.json")
    config = family.with_vocab(config, spec)           # the tokenizer's special ids (pad ...)
    model = family.build(config, unpad=False, nsp=False)
    n_params = family.export(weights, config, vocab_spec, folder)   # a transformers folder

Starting from existing weights (--init_from: trainer/start/origin.py) asks three more things: the
prefix a bare encoder's parameter names lack (`base_prefix`: BertModel's files say
"embeddings.*", BertForPreTraining's "bert.embeddings.*"), the parameters with a row per token
(`vocab_rows`, which a new vocabulary resizes: trainer/models/vocab_transfer.py), and the
transformers class a run from a given architecture exports as (`export_class`: a BERT from a
BertModel folder comes back as BertForMaskedLM).

A family's model takes the trainer's batch (input_ids, segment_ids, input_mask,
masked_lm_positions, masked_lm_labels, next_sentence_labels; `unpadded` where the family unpads)
and returns trainer.models.output.PretrainingOutput.
"""
from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from common.os_errors import as_os_error
from common.progress import stderr_is_terminal


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
    base_prefix: str = ""        # the encoder's module in the parameter names ("bert")
    vocab_rows: tuple[str, ...] = ()  # parameters with one row per token (embeddings, decoder, bias)
    rope_keys: tuple[str, ...] = ()   # the RoPE θ a phase may set (trainer/config/phases.py): ()
                                      # without RoPE, ("rope_theta",) for a BERT-style RoPE family
    position_table: str | None = None   # the learned position table's parameter (None: RoPE,
                                        # no table to extend)

    # -- config ---------------------------------------------------------------------------
    def read_config(self, d: dict, source: str):
        """The family's config from a model JSON's keys; ValueError naming `source` and the key."""
        raise NotImplementedError

    def read_config_file(self, path: str | os.PathLike):
        """The model JSON file `path` as the family's config."""
        return self.read_config(read_model_json(path, f"--model_config {self.example_config}"),
                                source=str(path))

    def config_dict(self, config) -> dict:
        """The config as JSON-able keys (a checkpoint's meta.json, the run's model_config.json)."""
        return {k: v for k, v in config.to_dict().items() if not k.startswith("_")}

    def max_positions(self, config) -> int:
        return config.max_position_embeddings

    def vocab_size(self, config) -> int:
        return config.vocab_size

    def special_ids(self, spec) -> dict:
        """The config's keys that hold the tokenizer's special ids, with `spec`'s values
        ({"pad_token_id": 1, ...}); {} where the network keeps none."""
        return {}

    def with_vocab(self, config, spec, size: int | None = None):
        """A copy of `config` for the tokenizer `spec`: its special ids (special_ids) and, for a
        new vocabulary on an existing model, `size` rows (vocab_size)."""
        config = copy.deepcopy(config)
        changes = self.special_ids(spec) if spec is not None else {}
        if size is not None:
            changes["vocab_size"] = size
        for key, value in changes.items():
            setattr(config, key, value)
        return config

    def move_rows(self, state: dict, old_config, new_config) -> dict:
        """Weights of a model of `old_config` for `new_config`, whose special ids may differ
        (RoBERTa counts positions from its padding id); the token rows are vocab_transfer's."""
        return state

    # -- sequence-length phases and longer rows -------------------------------------------
    def fit_positions(self, config, seq_len: int):
        """(config, note): a config whose positions cover rows of `seq_len` tokens, and the log
        line that says what changed (None: nothing). A learned position table must already cover
        them: a ValueError says how to extend it (--max_position_embeddings beside --init_from);
        a RoPE family without a table overrides this to raise max_position_embeddings."""
        have = self.max_positions(config)
        if seq_len <= have:
            return config, None
        raise ValueError(f"rows of {seq_len} tokens, but the {self.display_name} model's learned "
                         f"position table covers {have}: pass --max_position_embeddings {seq_len} "
                         "beside --init_from to extend the trained table by copying its rows, or "
                         "for a model from scratch set max_position_embeddings in the model config "
                         f"(--model_config) to cover {seq_len}")

    def position_offset(self, config) -> int:
        """The table's rows before the first token's (RoBERTa counts from its padding id + 1)."""
        return 0

    def extend_positions(self, config, n: int):
        """(config, note): --max_position_embeddings N, a copy of `config` whose learned table
        covers rows of `n` tokens (the rows themselves: extend_position_rows). A ValueError for
        a table smaller than the model's, or a family without one (what to do instead)."""
        if self.position_table is None:
            raise ValueError(f"--max_position_embeddings {n}: {self.display_name} has no learned "
                             "position table to extend")
        have = self.max_positions(config)
        if n < have:
            raise ValueError(f"--max_position_embeddings {n} is smaller than the {self.display_name} "
                             f"model's {have} positions: a table is extended, never cut; give N >= "
                             f"{have} (the longest rows), or leave it out")
        if n == have:
            return config, None
        config = copy.deepcopy(config)
        config.max_position_embeddings = n + self.position_offset(config)
        return config, None

    def extend_position_rows(self, state: dict, config) -> tuple[dict, str | None]:
        """(state, note): weights whose position table is shorter than `config`'s, extended by
        Longformer's recipe: the new rows repeat the learned ones in order (position k takes
        learned row k mod n); the rows before the first token's (position_offset) stay."""
        table = state.get(self.position_table) if self.position_table else None
        offset = self.position_offset(config)
        want = offset + self.max_positions(config)
        if table is None or table.shape[0] >= want:
            return state, None
        learned = table[offset:]
        n = learned.shape[0]
        reps = -(-(want - offset) // n)
        rows = learned.repeat(reps, 1)[:want - offset]
        new = table.new_empty((want, table.shape[1]))
        new[:offset] = table[:offset]
        new[offset:] = rows
        kept = f" (rows 0-{offset - 1} before the first position kept)" if offset else ""
        return {**state, self.position_table: new}, (
            f"{self.display_name}'s position table extended from {n:,} to {want - offset:,} positions "
            f"by copying its {n:,} learned rows in order (Longformer's recipe: position k takes row "
            f"k mod {n}){kept}")

    def with_rope_thetas(self, config, thetas: dict[str, float]):
        """A copy of `config` with RoPE θ by `rope_keys`' names (--global_rope_theta ...); only
        those names reach here (trainer/config/positions.py checks the flags)."""
        if thetas:
            raise NotImplementedError(f"{self.display_name} has no RoPE θ to set")
        return config

    def rope_thetas(self, config) -> dict[str, float]:
        """The config's RoPE θ by `rope_keys`' names ({} without RoPE)."""
        return {}

    def set_rope_thetas(self, model, thetas: dict[str, float]) -> None:
        """Set RoPE θ on a built model (its config and its rotary buffers), in place: what a
        phase asks for (only `rope_keys`' names; the config checks stop others)."""
        if thetas:
            raise NotImplementedError(f"{self.display_name} has no RoPE θ to set")

    def export_class(self, architecture: str | None) -> str | None:
        """The transformers class a run started from weights of `architecture` (a folder's
        config.json "architectures") exports as; None: the family's own, as from random weights."""
        return None

    def exports_nsp(self, export_class: str | None) -> bool:
        """Whether that export has a next-sentence head (which such a run may then train)."""
        return self.has_nsp

    # -- model ----------------------------------------------------------------------------
    def build(self, config, *, unpad: bool, nsp: bool):
        """A model with random weights (seeded by the caller); `nsp` False: MLM only."""
        raise NotImplementedError

    def compile(self, model) -> None:
        """torch.compile the encoder layers in place (parameter names unchanged)."""
        raise NotImplementedError

    # -- export ---------------------------------------------------------------------------
    def export(self, weights: dict, config, spec, folder: Path, export_class: str | None = None) -> int:
        """Write the transformers model files (config.json, model.safetensors, and whatever its
        tokenizer needs beyond the files export wrote) into `folder` from a checkpoint's
        `weights`, as `export_class` (None: the family's own); returns the parameter count.
        ModelFileError when they do not fit."""
        raise NotImplementedError

    def card(self, no_nsp: bool, export_class: str | None = None) -> CardText:
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


    try:
        save_file(state, str(path), metadata={"format": "pt"})
    except Exception as exc:  # noqa: BLE001  safetensors' own error for a full disk
        fault = as_os_error(exc, path)
        if fault is exc:
            raise
        raise fault from None


def read_hf_config(config_cls, d: dict, source: str, required: tuple[str, ...], what: str,
                   example: str, defaults: dict | None = None):
    """A transformers config of class `config_cls` from a model JSON's (or a transformers
    config.json's) keys: the `required` ones integers >= 1, heads dividing the width; the
    class's own attribute names (hidden_size for DistilBERT's dim) read as it reads them."""
    d = {getattr(config_cls, "attribute_map", {}).get(k, k): v for k, v in d.items()} if isinstance(d, dict) else d
    require_keys(d, required, source, what, example)
    for k in required:
        if not isinstance(d[k], int) or isinstance(d[k], bool) or d[k] < 1:
            raise ValueError(f"{source}: {k} must be an integer >= 1, got {d[k]!r}")
    keys = {k: v for k, v in d.items() if not k.startswith("_")
            and k not in ("architectures", "model_type", "transformers_version")}
    config = config_cls(**{**(defaults or {}), **keys})
    width, heads = config.hidden_size, config.num_attention_heads
    if width % heads:
        raise ValueError(f"{source}: the width {width} is not a multiple of the {heads} heads")
    return config


def save_hf_model(model_cls, config, weights: dict, folder: Path, display_name: str) -> int:
    """transformers' own save_pretrained of `model_cls` holding the checkpoint's `weights`
    (config.json + model.safetensors, tied weights stored once); returns the parameter count."""
    model = model_cls(config)
    problems = state_dict_mismatch(model.state_dict(), weights)
    if problems:
        raise ModelFileError(f"the weights do not fit the {display_name} config ({problems})")
    model.load_state_dict(weights, strict=False)
    model.tie_weights()
    with quiet_save():
        model.save_pretrained(folder, safe_serialization=True)
    return sum(p.numel() for p in model.parameters())


@contextlib.contextmanager
def quiet_save():
    """save_pretrained without what an export has no use for. Its first step unwraps the model
    through accelerate, which imports DeepSpeed whenever it is installed only to ask whether the
    model is a DeepSpeedEngine: seconds, and DeepSpeed's "Setting accelerator to CPU" warning,
    in an export that does not use it (the model here is transformers' own, never an engine:
    the answer is no). Its "Writing model shards" bar is left out where stderr is not a
    terminal (a log file: the bar would be carriage-return fragments)."""
    from transformers.utils import logging as hf_logging  # here: this module is light until an export

    try:
        from accelerate.utils import other
    except ImportError:   # without accelerate transformers unwraps by itself, asking no DeepSpeed
        other = None
    probe = getattr(other, "is_deepspeed_available", None)
    bars = hf_logging.is_progress_bar_enabled()
    if probe is not None and "deepspeed" not in sys.modules:   # already imported: nothing to spare
        other.is_deepspeed_available = lambda: False
    if bars and not stderr_is_terminal():
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if probe is not None:
            other.is_deepspeed_available = probe
        if bars:
            hf_logging.enable_progress_bar()
