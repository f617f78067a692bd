"""heldout_mlm.json: a run's held-out masked-LM measure, its name and its record in one place.

`make pretrain` writes it beside the run after the export (recipes/heldout_mlm.py measures,
recipes/pretrain.py saves); the run's report (pipeline/report/training.py) and the export's
model card (trainer/export/card.py) read it. It lives in common because the readers may not
import recipes, which uses them.

The record: what heldout_accuracy returns ("accuracy", "tokens", "rows", "unigram_accuracy",
"unigram_token"; since issue 60 also "standard_error", "ratio", "ratio_standard_error",
"rows_held_out" and "max_tokens", the sample's cap), then "model" and "hdf5" (what was measured
on what), "line" (the measure in words) and, when known, "step" (the checkpoint the export was
made from). In words for a page or a card: common/numbers.py's baseline_text.

Two held-out accuracies are reported for one held-out text, and each is named for what it
measures wherever it is shown (the trainer's eval line, make pretrain's closing lines,
report.html, the model card): the trainer's eval scores the test rows' static masks, whose
inputs are 80% [MASK], 10% a random token and 10% the token itself, which the model learns to
copy (STATIC_MASKS); heldout_mlm.json masks every token once as [MASK] (EVERY_TOKEN). On a uk
export at step 202 the first was 0.133, the second 0.082: the static masks' [MASK] inputs scored
0.078, their random ones 0.046 and their kept ones 0.691 (bench/README.md, issue 60).
`verdict` reads the second against the unigram baseline, in the words of make pretrain's
closing line and of report.html's "What needs a look".
"""
from __future__ import annotations

import json
from pathlib import Path

from common.atomic import write_text_atomic

HELDOUT = "heldout_mlm.json"
STATIC_MASKS = "at the test rows' static masks, 80% [MASK] / 10% random / 10% kept"
EVERY_TOKEN = "every token masked once as [MASK]"
LEARNED = 2.0     # x the unigram baseline: at least this, the model reads the context
PLATEAU = 1.2     # at most this, it is still at word frequencies (the unigram plateau)


def verdict(ratio: float) -> str:
    """What a held-out [MASK] accuracy at `ratio` x the unigram baseline says of the model."""
    return ("it learned: it reads the context, not only how often words occur" if ratio >= LEARNED
            else "it learned little beyond word frequencies: train longer" if ratio > PLATEAU
            else "it has not learned more than word frequencies yet: train longer")


def write_heldout(path: str | Path, measure: dict, model_dir: Path, hdf5_dir: Path, line: str,
                  step: int | None = None) -> None:
    """The record at `path` (RUN/heldout_mlm.json), written atomically."""
    record = {**measure, "model": str(model_dir), "hdf5": str(hdf5_dir), "line": line,
              **({"step": step} if step is not None else {})}
    write_text_atomic(Path(path), lambda fh: fh.write(json.dumps(record, indent=1) + "\n"))


def read_heldout(run_dir: str | Path) -> dict:
    """The record of the run in `run_dir`; {} when it has none or it cannot be read (a torn or
    foreign file is no measure, not a failed report)."""
    try:
        record = json.loads((Path(run_dir) / HELDOUT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
