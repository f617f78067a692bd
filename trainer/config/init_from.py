"""What `--init_from PATH` names, read without torch (the config resolves the family from it):
a transformers model folder, or a wiki2bert run.

    source = open_init_source("xlm-roberta-base/")    # InitSource; ConfigError in one line
    source.model_type, source.config, source.weight_files, source.tokenizer, source.export_class

- A transformers folder: config.json (its "model_type" gives the family through the registry,
  trainer/models/__init__.py; its "architectures" the class of the weights: *ForMaskedLM,
  BertForPreTraining, a bare BertModel / XLMRobertaModel ...) and the weights: model.safetensors,
  pytorch_model.bin, or the shards their *.index.json lists. Its tokenizer is the folder's own
  when it holds tokenizer files.
- A wiki2bert run: an output_dir (its newest complete checkpoint) or a checkpoints/ckpt_* dir;
  meta.json says the family, the config and the class it exports as; the run dir's vocabulary
  (vocab.txt or tokenizer.json) is its tokenizer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from trainer.checkpoint.layout import CheckpointError, is_complete, latest_checkpoint, meta_model_config, read_meta
from trainer.config.errors import ConfigError
from trainer.models import DEFAULT, family_of_config, get_family, names

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# what marks a folder as holding a tokenizer (a slow one is converted, or refused, by vocab/)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "sentencepiece.bpe.model",
                   "spiece.model", "tokenizer.model", "vocab.json")
WHAT = ("a transformers model folder (config.json with model.safetensors or pytorch_model.bin) "
        "or a wiki2bert run (its --output_dir or one of its checkpoints/ckpt_* folders)")


@dataclass(frozen=True)
class InitSource:
    path: Path
    model_type: str                    # the family (its --model_type)
    config: dict                       # the model config's keys
    weight_files: tuple[Path, ...]
    architecture: str | None           # the weights' transformers class; None for a run
    export_class: str | None           # what a run from it exports as (None: the family's own)
    tokenizer: Path | None             # the folder holding its tokenizer, if any
    is_run: bool

    def describe(self) -> str:
        if self.is_run:
            return f"wiki2bert run {self.path}"
        return f"{self.architecture or 'transformers'} folder {self.path}"


def open_init_source(path) -> InitSource:
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"--init_from {p} does not exist: give {WHAT}")
    if p.is_dir():
        ckpt = p if is_complete(p) else latest_checkpoint(p)
        if ckpt is not None:
            return _run_source(p, ckpt)
        if (p / "config.json").is_file():
            return _folder_source(p)
    raise ConfigError(f"--init_from {p} holds no model: give {WHAT}")


def _folder_source(p: Path) -> InitSource:
    try:
        config = json.loads((p / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--init_from {p}: config.json cannot be read ({exc})") from None
    if not isinstance(config, dict):
        raise ConfigError(f"--init_from {p}: config.json is not a JSON object")
    if "model_type" not in config and "architectures" not in config:
        top = p.resolve().parent
        if (top / "modules.json").is_file() and (top / "config.json").is_file():
            raise ConfigError(f"--init_from {p} holds no model: it is a module of a sentence-"
                              f"transformers model ({p.name}), whose transformer is the folder "
                              f"above it: --init_from {top}")
        raise ConfigError(f"--init_from {p} holds no model: its config.json has no model_type (not "
                          f"a transformers model's config); give {WHAT}")
    try:
        model_type = family_of_config(config, f"--init_from {p}")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    files = _weight_files(p)
    arch = config.get("architectures")
    arch = arch[0] if isinstance(arch, list) and arch and isinstance(arch[0], str) else None
    tokenizer = p if any((p / f).is_file() for f in TOKENIZER_FILES) else None
    return InitSource(p, model_type, config, files, arch, get_family(model_type).export_class(arch),
                      tokenizer, is_run=False)


def _weight_files(p: Path) -> tuple[Path, ...]:
    for name in WEIGHT_FILES:
        if (p / name).is_file():
            return (p / name,)
        index = p / f"{name}.index.json"
        if index.is_file():
            try:
                shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
            except (OSError, ValueError, KeyError, AttributeError) as exc:
                raise ConfigError(f"--init_from {p}: {index.name} cannot be read ({exc})") from None
            missing = [s for s in shards if not (p / s).is_file()]
            if missing:
                raise ConfigError(f"--init_from {p}: {index.name} lists {missing[0]}, which is not there")
            return tuple(p / s for s in shards)
    raise ConfigError(f"--init_from {p} holds no model: config.json but no weights "
                      f"({', '.join(WEIGHT_FILES)} or their sharded *.index.json); give {WHAT}")


def _run_source(p: Path, ckpt: Path) -> InitSource:
    try:
        meta = read_meta(ckpt)
    except CheckpointError as exc:
        raise ConfigError(f"--init_from {p}: {exc}") from None
    model_type = meta.get("model_type", DEFAULT)
    if model_type not in names() or meta_model_config(meta) is None:
        raise ConfigError(f"--init_from {p}: {ckpt / 'meta.json'} names no model this trainer knows "
                          f"(model_type {model_type!r}): the checkpoint is damaged or from another version")
    run_dir = ckpt.parent.parent if ckpt.parent.name == "checkpoints" else None
    tokenizer = run_dir if run_dir is not None and any(
        (run_dir / f).is_file() for f in ("vocab.txt", "tokenizer.json")) else None
    return InitSource(p, model_type, meta_model_config(meta), (ckpt / "model.pt",), None,
                      meta.get("export_class"), tokenizer, is_run=True)
