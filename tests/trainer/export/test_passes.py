"""The model card's line on the passes over the text (trainer/export/passes.py): what the run
read (its last training record), else what its plan meant to (hparams.json), per source with its
weight and tokens, a note past 4 passes; no line for a run from before passes were counted."""
from __future__ import annotations

import json

from tests.trainer.export.test_card import small_card, write

PLAN = {"passes": 37.2, "passes_most": 37.2, "passes_steps": 636, "passes_per_phase": [37.2],
        "passes_tokens": 41_700_000, "text_tokens": 1_120_000,
        "passes_by_source": {"wikipedia": {"passes": 37.2, "weight": 1.0, "tokens": 1_000_000},
                             "fineweb-2": {"passes": 18.6, "weight": 0.5, "tokens": 240_000}}}


def card_of(tmp_path, hparams: dict, records: list[dict]) -> str:
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000636"
    write(run / "hparams.json", {"max_steps": 636, "phase": 1, **hparams})
    write(run / "train_log.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    write(ckpt / "meta.json", {"step": 636, "phase": 1})
    return small_card(run, ckpt, tmp_path, 1000, "bert")


def test_the_card_says_what_the_run_read_per_source(tmp_path):
    read = {k.replace("passes", "passes_read"): v for k, v in PLAN.items()}
    card = card_of(tmp_path, PLAN, [{"step": 636, "loss": 6.0, "mlm_loss": 6.0, **read}])
    row = next(line for line in card.splitlines() if line.startswith("| passes over the text |"))
    assert row == ("| passes over the text | 37.2, read by the end of the run, 41,700,000 tokens read of a text "
                   "of 1,120,000; wikipedia 37.2 of 1,000,000 tokens, fineweb-2 18.6 (weight 0.5) of 240,000 "
                   "tokens; past about 4 passes repeated text teaches little (Muennighoff et al. 2023) |")


def test_the_plan_where_the_end_was_not_logged_and_nothing_before_passes_were_counted(tmp_path):
    few = {"passes": 0.5, "passes_most": 0.5, "passes_tokens": None, "text_tokens": None, "passes_by_source": {}}
    card = card_of(tmp_path / "a", few, [{"step": 10, "loss": 6.0, "mlm_loss": 6.0}])
    assert "| passes over the text | 0.50, planned (the run's end was not logged) |" in card
    assert "passes over the text" not in card_of(tmp_path / "b", {}, [{"step": 10, "loss": 6.0, "mlm_loss": 6.0}])
