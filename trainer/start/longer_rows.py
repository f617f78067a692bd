"""A model that exists, on longer rows (issue 44): the flags of trainer/config/positions.py applied
to the start's model config before anything is built, through the family.

    start, notes = extend_start(config, family, start)    # TrainError in one line

- `--max_position_embeddings N` (beside --init_from): the family's learned table covers rows of
  N tokens (`family.extend_positions`: RoBERTa's rows before the first position stay where they
  are); the weights' rows are copied when they are loaded (`family.extend_position_rows`, from
  trainer/start/origin.py's load_init_weights), stated in one log line there. A table smaller than the
  model's, or a family without one (RoPE), is one line that says what to do instead.
- `--global_rope_theta` / `--local_rope_theta` / `--rope_theta`: the model config's θ (what a
  run without phases trains with, and what a phase leaves out inherits), one log line saying
  what it was. The family already refused names it does not take (trainer/config/resolved.py).
"""
from __future__ import annotations

import dataclasses

from trainer.config.positions import flag_thetas
from trainer.errors import TrainError


def extend_start(config, family, start):
    """(start with its model config extended and its θ set, the log lines that say so)."""
    model_config, notes = start.model_config, []
    n = config.max_position_embeddings
    if n is not None:
        try:
            model_config, note = family.extend_positions(model_config, n)
        except ValueError as exc:
            raise TrainError(str(exc)) from None
        if note:
            notes.append(note)
    thetas = flag_thetas(config)
    if thetas:
        before = family.rope_thetas(model_config)
        model_config = family.with_rope_thetas(model_config, thetas)
        notes.append("RoPE θ set by the flags: " + ", ".join(
            f"{key} {before.get(key, float('nan')):g} -> {value:g}" for key, value in thetas.items()))
    if model_config is start.model_config:
        return start, notes
    return dataclasses.replace(start, model_config=model_config), notes
