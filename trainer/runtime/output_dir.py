"""The run's output_dir: refuse to mix runs, copy the vocab, record the run's settings.

    latest = prepare_output_dir(config, is_main)   # the checkpoint to resume, or None
    copy_vocab(config.vocab_file, model_vocab_size, out, write=is_main)
    write_run_info(out, config, model_config_dict, world_size=..., ...)   # hparams.json, bert_config.json

The files are those run_pretraining.py's usage lists; checkpoints/ is trainer/checkpoint/'s.
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

from common.atomic import write_json_atomic
from trainer.checkpoint.layout import latest_checkpoint, list_checkpoints, read_meta
from trainer.errors import TrainError

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


def copy_vocab(vocab_file: str | None, bert_vocab_size: int, out: Path, write: bool) -> int | None:
    """Check the vocab against the model; copy it and its case setting into output_dir."""
    if not vocab_file:
        log.warning("no --vocab_file: output_dir gets no vocab.txt (export will need --vocab_file)")
        return None
    from vocab.spec import TOKENIZER_CONFIG, load_vocab, read_case_setting, tokenizer_config

    spec = load_vocab(vocab_file)
    if spec.size > bert_vocab_size:
        raise TrainError(f"--vocab_file {spec.vocab_file} has {spec.size} tokens but the model's "
                         f"vocab_size is {bert_vocab_size}: set vocab_size >= {spec.size} in --bert_config")
    if write:
        shutil.copyfile(spec.vocab_file, out / "vocab.txt")
        cfg = spec.vocab_file.parent / TOKENIZER_CONFIG
        if cfg.is_file():
            shutil.copyfile(cfg, out / TOKENIZER_CONFIG)
        else:
            write_json_atomic(out / TOKENIZER_CONFIG,
                              tokenizer_config(*read_case_setting(spec.vocab_file.parent)))
    return spec.size


def write_run_info(out: Path, config, model_config: dict, **facts) -> None:
    """hparams.json (the resolved config, then `facts` about the run, then the code's git
    state) and bert_config.json (the model's config); git_diff.patch too when the checkout has
    changes."""
    from trainer.runtime.logs import write_git_info

    hp = config.to_dict()
    hp.update(facts, git=write_git_info(out))
    write_json_atomic(out / "hparams.json", hp)
    write_json_atomic(out / "bert_config.json", model_config)
