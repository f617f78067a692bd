"""Where a fine-tuned model starts: a Hugging Face folder, a trainer run dir or one checkpoint.

Usage:
    with model_folder("runs/uk_p1") as folder:        # newest complete checkpoint, exported
        tokenizer = load_tokenizer(folder)
        model = build_model(folder, "token", num_labels=3, pretrained=True, ...)

A run dir or a ckpt_* dir is exported to a temporary Hugging Face folder with the trainer's own
export (trainer/export/hf.py), so fine-tuning always starts from what a user would publish: the
same weights, vocab and case setting. `pretrained=False` builds the same architecture from the
folder's config with fresh weights (transformers' own initialisation under the seed): the
random-init baseline.
"""
from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from trainer.export import ExportError, export
from trainer.finetune.hub_reach import hub_or_cache
from trainer.finetune.readers import FinetuneDataError
from trainer.finetune.task_table import HEADS
from trainer.models import hf_max_positions


def is_hf_folder(path: Path) -> bool:
    return path.is_dir() and (path / "config.json").is_file()


@contextlib.contextmanager
def model_folder(model: str | os.PathLike) -> Iterator[Path]:
    """A Hugging Face folder for `model`: itself, or a temporary export of a run/checkpoint."""
    path = Path(model)
    if is_hf_folder(path):
        yield path
        return
    if not path.exists() and HUB_NAME.fullmatch(str(model)):
        yield hub_model(str(model))
        return
    if not path.exists():
        raise FinetuneDataError(f"--model {path} does not exist: give an exported Hugging Face "
                                "folder, a trainer --output_dir or one of its ckpt_* dirs")
    with tempfile.TemporaryDirectory(prefix="w2b_finetune_model_") as tmp:
        try:
            export(path, Path(tmp) / "model", where="TMPDIR (where the checkpoint is exported)")
        except ExportError as e:
            raise FinetuneDataError(f"--model {path}: {e}") from None
        yield Path(tmp) / "model"


# a Hub model id: "name" or "owner/name" (a path that does not exist and looks like one)
HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
# the files fine-tuning reads; other frameworks' weights and ONNX exports are left on the Hub
HUB_FILES = ["*.json", "*.txt", "*.model", "*.safetensors", "pytorch_model*.bin"]


def hub_model(name: str) -> Path:
    """The local snapshot of a Hub model (a --compare MODEL such as bert-base-multilingual-cased):
    from the cache, downloaded where there is a network."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    with hub_or_cache() as unreachable:   # no network: the cache alone, no retries
        try:
            return Path(snapshot_download(name, allow_patterns=HUB_FILES))
        except LocalEntryNotFoundError:
            raise FinetuneDataError(
                f"model {name}: no such folder, not in the Hugging Face cache, and the Hub cannot be "
                f"reached ({unreachable or 'HF_HUB_OFFLINE or no network'}); download it where there is a "
                "network (huggingface-cli download NAME --local-dir DIR) and give DIR instead") from None
        except (HfHubHTTPError, ValueError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise FinetuneDataError(f"model {name}: no such folder, and the Hub says: {first}") from None


def load_tokenizer(folder: Path, max_length: int):
    """The folder's fast tokenizer (word ids and offsets are needed to label words and spans)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, use_fast=True, model_max_length=max_length)
    if not tokenizer.is_fast:
        raise FinetuneDataError(f"{folder}: no fast tokenizer (tokenizer.json or vocab.txt) "
                                "for this model; word and span labels need one")
    return tokenizer


def max_positions(folder: Path) -> int:
    """The tokens a row of the folder's model can hold: the model family's rule
    (trainer/models: RoBERTa's positions start after the padding id, 514 -> 512)."""
    from transformers import AutoConfig

    return hf_max_positions(AutoConfig.from_pretrained(folder))


def build_model(folder: Path, kind: str, *, num_labels: int = 2, labels: list[str] | None = None,
                pretrained: bool = True, dropout: float | None = None):
    """A task model on the folder's encoder; heads start fresh. pretrained=False: fresh weights
    everywhere (call after seeding, so the seed decides them)."""
    import transformers

    auto = getattr(transformers, HEADS[kind])
    extra = {}
    if labels is not None:
        extra = {"num_labels": len(labels), "id2label": dict(enumerate(labels)),
                 "label2id": {lab: i for i, lab in enumerate(labels)}}
    elif kind != "qa":
        extra = {"num_labels": num_labels}
    if dropout is not None:
        extra["hidden_dropout_prob"] = dropout
    config = transformers.AutoConfig.from_pretrained(folder, **extra)
    if not pretrained:
        return auto.from_config(config)
    return auto.from_pretrained(folder, config=config)


def quiet_transformers() -> None:
    """No advisory warnings from transformers on a user's terminal (they are about our own
    deliberate choices: fresh heads, unused pretraining heads)."""
    import transformers

    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()   # "Loading weights" bar once per seed
