"""A training checkpoint as a Hugging Face model folder (what `python -m trainer.export` writes).

    export(checkpoint_dir, output, vocab_file=None)   # ExportError / VocabError in one line

--checkpoint_dir is either a run's output dir (the newest complete checkpoint under
OUTPUT_DIR/checkpoints/ckpt_* is taken; half-written .tmp_ckpt_* dirs are ignored) or one
ckpt_* dir (the vocab then comes from its run dir, two levels up). The checkpoint's model
family (its meta.json's "model_type", trainer/models/) writes the model files as transformers'
own class (or the one its meta.json's "export_class" names: a BERT started from a BertModel
exports as BertForMaskedLM): config.json and model.safetensors; this module adds the tokenizer's
files (vocab.txt and tokenizer_config.json with the vocab's case setting; a transformers
tokenizer's own files; tokenizer.json wherever the kind has a fast form, so AutoTokenizer loads
every export) and a README.md model card (trainer/export/card.py), and moves the files
in atomically, each with the umask's mode. transformers' Auto classes then load the folder with no missing
weights and the trainer's outputs.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from common.atomic import follow_umask
from common.os_errors import DiskSpaceError, check_free_space
from trainer.checkpoint.layout import (
    TMP_PREFIX,
    CheckpointError,
    is_complete,
    list_checkpoints,
    meta_model_config,
    model_config_file,
)
from trainer.export.card import model_card
from trainer.export.evaluation import evaluation_section, find_evaluation
from trainer.models import get_family
from trainer.models.family import ModelFileError
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer

log = logging.getLogger(__name__)

# Prefixes wrappers add to parameter names (DDP, torch.compile).
WRAPPER_PREFIXES = ("module.", "_orig_mod.")


class ExportError(ValueError):
    """The checkpoint or vocab can't be exported; the message says why and what to do."""


def find_checkpoint(checkpoint_dir: str | os.PathLike) -> tuple[Path, Path | None]:
    """(the checkpoint dir to export, the run dir holding its tokenizer and model_config.json, or None)."""
    d = Path(checkpoint_dir)
    if not d.is_dir():
        raise ExportError(f"{d} is not a directory: pass the training --output_dir or one of "
                          "its checkpoints/ckpt_* dirs")
    if is_complete(d):
        return d, d.parent.parent if d.parent.name == "checkpoints" else None
    if d.name.startswith(TMP_PREFIX):
        raise ExportError(f"{d} is a half-written checkpoint: pass a complete ckpt_* dir")
    ckpts = list_checkpoints(d)
    if not ckpts:
        raise ExportError(f"no complete checkpoint (checkpoints/ckpt_*/model.pt + meta.json) "
                          f"under {d}: train with --checkpoint_every first, or pass a ckpt_* dir")
    return ckpts[-1], d


def read_checkpoint_meta(ckpt: Path) -> dict:
    meta_file = ckpt / "meta.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ExportError(f"{meta_file} is not valid JSON ({e}): the checkpoint is damaged") from None
    if not isinstance(meta, dict):
        raise ExportError(f"{meta_file} is not a JSON object: the checkpoint is damaged")
    return meta


def read_model_config(family, ckpt: Path, meta: dict, run_dir: Path | None):
    """The model config of the checkpoint: its meta.json's, else the run dir's model_config.json
    (either by its old name, bert_config: trainer/checkpoint/layout.py)."""
    meta_file = ckpt / "meta.json"
    recorded = meta_model_config(meta)
    in_run = model_config_file(run_dir) if run_dir is not None else None
    try:
        if recorded is not None:
            return family.read_config(recorded, source=f"{meta_file} (model_config)")
        if in_run is not None:
            return family.read_config_file(in_run)
    except (ValueError, KeyError, TypeError) as e:
        raise ExportError(f"{meta_file}: no usable {family.display_name} config ({e}): the checkpoint "
                          "is damaged") from None
    raise ExportError(f"{meta_file} has no model_config and there is no model_config.json in the "
                      "run dir: the model shape is unknown")


def checkpoint_weights(ckpt: Path) -> dict:
    """model.pt's state_dict, without the prefixes wrappers add."""
    from trainer.checkpoint.files import load_file  # torch: `python -m trainer.export --help` stays instant

    try:  # tensors only (weights_only): a foreign file is refused, never run
        sd = load_file(ckpt / "model.pt")
    except CheckpointError as e:  # truncated or foreign: which file and why, in one line
        raise ExportError(str(e)) from None
    if isinstance(sd, dict) and isinstance(sd.get("model"), dict):
        sd = sd["model"]
    if not isinstance(sd, dict):
        raise ExportError(f"{ckpt / 'model.pt'} does not hold a state_dict")
    for prefix in WRAPPER_PREFIXES:
        if sd and all(k.startswith(prefix) for k in sd):
            sd = {k[len(prefix):]: v for k, v in sd.items()}
    return sd


def vocab_bytes(spec) -> int:
    """The size of the tokenizer's files (vocab.txt, or tokenizer.json, and their config)."""
    return sum(p.stat().st_size for p in spec.files if p.is_file())


def export_bytes(weights: dict, vocab_size_bytes: int) -> int:
    """What the export writes: the tensors (safetensors adds a small header), the vocab twice
    at most (vocab.txt, tokenizer.json), the config, tokenizer config and model card."""
    tensors = sum(v.numel() * v.element_size() + 256 for v in weights.values())
    return tensors + 2 * vocab_size_bytes + (256 << 10)


def export(checkpoint_dir, output, vocab_file=None, where: str = "--output",
           evaluation=None) -> Path:
    """Write HF_DIR from a checkpoint (see module docstring); returns the checkpoint used.
    Refused before writing when the disk of HF_DIR (`where` names the flag) is too small.
    `evaluation`: fine-tuning results for the card (trainer/export/evaluation.py; default the
    run's downstream/ results)."""
    ckpt, run_dir = find_checkpoint(checkpoint_dir)
    try:   # read before anything is written: a bad file is refused whole
        evaluation_text = evaluation_section(find_evaluation(run_dir, evaluation))
    except ValueError as e:
        if evaluation is not None:
            raise ExportError(str(e)) from None
        # the run's own downstream/ results are a bonus: never a reason to refuse an export
        log.warning("model card without an Evaluation section: %s", e)
        evaluation_text = ""
    try:   # the run's tokenizer, saved in its output_dir by its kind (vocab/kinds)
        spec = load_tokenizer(vocab_file if vocab_file is not None else run_dir or ckpt)
    except VocabError as e:
        if vocab_file is None:
            raise ExportError(f"no tokenizer in the run dir of {ckpt} ({e}): pass --vocab_file") from None
        raise ExportError(str(e)) from None
    meta = read_checkpoint_meta(ckpt)
    try:
        family = get_family(meta.get("model_type"))
    except ValueError as e:
        raise ExportError(f"{ckpt / 'meta.json'}: {e}") from None
    config = read_model_config(family, ckpt, meta, run_dir)
    if spec.size > family.vocab_size(config):
        raise ExportError(f"{vocab_file} has {spec.size} tokens but the model's vocab_size "
                          f"is {family.vocab_size(config)}: pass the vocab the model was trained with")
    weights = checkpoint_weights(ckpt)

    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        check_free_space(out.parent, export_bytes(weights, vocab_bytes(spec)), "the exported model",
                         where=where)
    except DiskSpaceError as e:
        raise ExportError(str(e)) from None
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp_export_{out.name}_", dir=out.parent))
    try:
        # as its kind writes it, with tokenizer.json where the kind has a fast form (AutoTokenizer
        # wants one for most model types)
        spec.save(tmp, model_max_length=family.max_positions(config), tokenizer_json=True)
        try:
            n_params = family.export(weights, config, spec, tmp, export_class=meta.get("export_class"))
        except ModelFileError as e:
            raise ExportError(f"{ckpt / 'model.pt'}: {e}") from None
        (tmp / "README.md").write_text(model_card(run_dir, ckpt, config, spec, n_params, family,
                                                  evaluation_text),
                                       encoding="utf-8")
        # Files move in one by one with os.replace: readers see old or new files, never halves;
        # each with the umask's mode, as a file the user writes (safetensors writes 0600).
        out.mkdir(exist_ok=True)
        for f in tmp.iterdir():
            follow_umask(f)
            os.replace(f, out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ckpt
