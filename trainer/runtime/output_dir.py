"""The run's output_dir: refuse to mix runs, copy the vocab, record the run's settings.

    latest = prepare_output_dir(config, is_main)   # the checkpoint to resume, or None
    copy_vocab(start.spec, model_vocab_size, out, write=is_main)   # the run's tokenizer, as its kind saves it
    write_run_info(out, config, model_config_dict, world_size=..., ...)   # hparams.json, bert_config.json

The files are those run_pretraining.py's usage lists; checkpoints/ is trainer/checkpoint/'s.
"""
from __future__ import annotations

import logging
from pathlib import Path

from common.atomic import write_json_atomic
from trainer.checkpoint.layout import latest_checkpoint, list_checkpoints, read_meta
from trainer.errors import TrainError
from trainer.runtime.logs import write_git_info

log = logging.getLogger("trainer")


def prepare_output_dir(config, is_main: bool):
    """Refuse to mix runs: existing checkpoints need --resume_from_checkpoint, same phase."""
    out, phase = Path(config.output_dir), config.phase
    found = list_checkpoints(out)
    if found and not config.resume_from_checkpoint:
        raise TrainError(f"--output_dir {out} already holds checkpoints: add "
                         "--resume_from_checkpoint to continue that run, or choose a new --output_dir")
    latest = latest_checkpoint(out) if config.resume_from_checkpoint else None
    if latest is not None and read_meta(latest).get("phase") != phase:
        raise TrainError(f"--output_dir {out} holds phase-{read_meta(latest).get('phase')} checkpoints: "
                         f"use a separate --output_dir for phase {phase}")
    if is_main:
        out.mkdir(parents=True, exist_ok=True)
    return latest


def copy_vocab(spec, model_vocab_size: int, out: Path, write: bool) -> int | None:
    """Check the run's tokenizer (loaded once: trainer/start.py) against the model; save it into
    output_dir as its kind saves it (vocab.txt and its case setting, or a tokenizer folder's
    files), so that export finds it."""
    if spec is None:
        log.warning("no --vocab_file: output_dir gets no vocab.txt (export will need --vocab_file)")
        return None
    if spec.size > model_vocab_size:
        raise TrainError(f"--vocab_file {spec.location} has {spec.size} tokens but the model's vocab_size is "
                         f"{model_vocab_size}: set vocab_size >= {spec.size} in --model_config")
    if write:
        spec.save(out)
    return spec.size


def write_run_info(out: Path, config, model_config: dict, **facts) -> None:
    """hparams.json (the resolved config, then `facts` about the run, then the code's git
    state) and bert_config.json (the model's config); git_diff.patch too when the checkout has
    changes."""
    hp = config.to_dict()
    hp.update(facts, git=write_git_info(out))
    write_json_atomic(out / "hparams.json", hp)
    write_json_atomic(out / "bert_config.json", model_config)
