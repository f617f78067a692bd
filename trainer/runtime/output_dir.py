"""The run's output_dir: refuse to mix runs, copy the vocab, record the run's settings.

    latest = prepare_output_dir(config, is_main)   # the checkpoint to resume, or None
    check_resume(latest, out, config, world_size, model_config_dict, spec)   # one TrainError line
    copy_vocab(start.spec, model_vocab_size, out, write=is_main)   # the run's tokenizer, as its kind saves it
    write_run_info(out, config, model_config_dict, step=step, world_size=..., ...)

The run's record is the run's: hparams.json (the resolved config and the facts of the run) and
model_config.json are written once, at its first start; each resume appends what it was started
with, and what differs from the first start, as a line of resumes.jsonl (its git state in
git_diff_resume_STEP.patch where the code had changed). A resume that would change the model
(its family, config, tokenizer, next-sentence head) or the data order (the seed, the global
batch; the loader's state refuses the rest) is refused before anything is built. With --phases
the global batch is the first phase's, and changed phases are the plan's one line (trainer/schedule/plan.py).
The files are those run_pretraining.py's usage lists; checkpoints/ is trainer/checkpoint/'s.
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from common.atomic import write_json_atomic
from trainer.checkpoint.layout import (
    MODEL_CONFIG,
    checkpoint_root,
    checkpoint_step,
    is_complete,
    latest_checkpoint,
    list_checkpoints,
    meta_model_config,
    model_config_file,
    read_meta,
)
from trainer.errors import TrainError
from trainer.runtime.logs import write_git_info
from vocab.core.layout import VocabError
from vocab.kinds import load_tokenizer

HPARAMS = "hparams.json"
RESUMES = "resumes.jsonl"
# What a resume may not change: (hparams.json's key, in words, the flag that sets it). The
# loader's state refuses the rest of the data order (its files, masking, languages and schedule).
KEPT = (("model_type", "model family", "--model_type"), ("no_nsp", "next-sentence head", "--no_nsp"),
        ("seed", "seed (the data order)", "--seed"),
        ("global_batch_size", "global batch (the samples of each step)",
         "--train_batch_size and --gradient_accumulation_steps per rank (or --tokens_per_step)"))

log = logging.getLogger("trainer")


def prepare_output_dir(config, is_main: bool):
    """Refuse to mix runs: existing checkpoints need --resume_from_checkpoint, same phase."""
    out, phase = Path(config.output_dir), config.phase
    found = list_checkpoints(out)
    if found and not config.resume_from_checkpoint:
        raise TrainError(f"--output_dir {out} already holds checkpoints: add "
                         "--resume_from_checkpoint to continue that run, or choose a new --output_dir")
    latest = latest_checkpoint(out) if config.resume_from_checkpoint else None
    if config.extend:
        latest = _extension_start(out, latest)
    if latest is not None and read_meta(latest).get("phase") != phase:
        raise TrainError(f"--output_dir {out} holds phase-{read_meta(latest).get('phase')} checkpoints: "
                         f"use a separate --output_dir for phase {phase}")
    if is_main:
        out.mkdir(parents=True, exist_ok=True)
    return latest


def _extension_start(out: Path, newest):
    """--extend's checkpoint: the last before the decay (the newest checkpoint's "stable_step")
    where the newest is past it, else the newest (the run stopped before its decay began); one
    line where there is none."""
    if newest is None:
        raise TrainError(f"--extend: --output_dir {out} holds no checkpoint to continue: leave --extend out to "
                         "start a run there")
    meta, step = read_meta(newest), checkpoint_step(newest)
    if "stable_step" in meta:
        if meta["stable_step"] is None or meta["stable_step"] == step:   # the decay has not begun
            return newest
        stable = checkpoint_root(out) / f"ckpt_{meta['stable_step']:08d}"
        if is_complete(stable):
            return stable
        raise TrainError(f"--extend: the checkpoint before the decay of the run in {out} (step "
                         f"{meta['stable_step']}) is gone: start a new --output_dir, e.g. with --init_from its export")
    if meta.get("end_step") is not None and step >= meta["end_step"]:   # written before --extend existed
        raise TrainError(f"--extend: the run in {out} ended at step {step} and kept no checkpoint from before "
                         "its decay (written by a trainer before --extend): start a new --output_dir, e.g. with "
                         "--init_from its export")
    return newest


def copy_vocab(spec, model_vocab_size: int, out: Path, write: bool) -> int | None:
    """Check the run's tokenizer (loaded once: trainer/start/origin.py) against the model; save it into
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


def check_resume(latest, out: Path, config, world_size: int, model_config: dict, spec) -> None:
    """A resume (`latest` not None) of a run whose first start recorded other settings that decide
    the model or the data order: one TrainError line naming the setting and what to do."""
    first = _read_json(Path(out) / HPARAMS) if latest is not None else None
    if not first:
        return
    now = {**config.to_dict(), "global_batch_size": _global_batch(config, world_size)}
    for key, what, flag in KEPT:
        if key == "global_batch_size" and _phases_changed(first, now):
            continue   # the phases' batches: the plan refuses changed phases in its own line (plan.py)
        if key in first and first[key] != now.get(key):
            _refuse(out, what, first[key], now.get(key), flag)
    recorded = _recorded_model_config(out, first)
    model_config = json.loads(json.dumps(model_config))   # as its JSON reads back (keys as strings)
    if recorded is not None and _comparable(recorded) != _comparable(model_config):
        changed = sorted(k for k in set(recorded) | set(model_config) if recorded.get(k) != model_config.get(k))
        _refuse(out, "model config", {k: recorded.get(k) for k in changed[:3]},
                {k: model_config.get(k) for k in changed[:3]}, "--model_config")
    if spec is not None:
        try:
            saved = load_tokenizer(out)
        except VocabError:   # the first start saved none (no --vocab_file then)
            return
        if saved.fingerprint != spec.fingerprint:
            _refuse(out, "tokenizer", f"{saved.piece_model} {saved.fingerprint[:12]}",
                    f"{spec.piece_model} {spec.fingerprint[:12]}", "--vocab_file")


def _global_batch(config, world_size: int) -> int:
    """hparams.json's global_batch_size: the samples of a step in the run's first phase (a run
    starts in it; a run without --phases is one phase of --train_batch_size)."""
    batch = (config.phases[0].train_batch_size if config.phases else None) or config.train_batch_size
    return batch * config.gradient_accumulation_steps * world_size


def _phases_changed(first: dict, now: dict) -> bool:
    return bool(now.get("phases")) and json.loads(json.dumps(now["phases"])) != first.get("phases")


def _refuse(out, what: str, first, now, flag: str):
    raise TrainError(f"--output_dir {out} is a run whose {what} was {first} at its first start and "
                     f"would be {now} in this resume: resume with the same {flag}, or start a new "
                     "--output_dir")


def _recorded_model_config(out: Path, first: dict) -> dict | None:
    found = model_config_file(out)
    return _read_json(found) if found is not None else meta_model_config(first)


def _comparable(model_config: dict) -> dict:
    return {k: v for k, v in model_config.items() if not k.startswith("_") and k != "transformers_version"}


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_run_info(out: Path, config, model_config: dict, step: int = 0, **facts) -> None:
    """At the run's first start (`step` 0): hparams.json (the resolved config, then `facts` about
    the run, then the code's git state) and model_config.json (the model's config), and
    git_diff.patch when the checkout has changes. At a resume (`step` > 0, hparams.json there):
    one line of resumes.jsonl, what it was started with and what changed since the first start."""
    hp = config.to_dict()
    hp.update(facts)
    first = _read_json(out / HPARAMS) if step else None
    if first is None:
        hp["git"] = write_git_info(out)
        write_json_atomic(out / HPARAMS, hp)
        write_json_atomic(out / f"{MODEL_CONFIG}.json", model_config)
        return
    hp["git"] = write_git_info(out, patch=f"git_diff_resume_{step:08d}.patch")
    changed = {k: {"first": first.get(k), "now": hp.get(k)} for k in sorted(set(first) | set(hp))
               if first.get(k) != hp.get(k) and k != "git"}
    record = {"step": step, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "hparams": hp,
              "changed": changed}
    with open(out / RESUMES, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    log.info("resumed at step %d: hparams.json keeps the first start's settings; %s in %s",
             step, f"changed since then: {', '.join(changed)}" if changed else "nothing changed", RESUMES)
