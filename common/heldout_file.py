"""heldout_mlm.json: a run's held-out masked-LM measure, its name and its record in one place.

`make pretrain` writes it beside the run after the export (recipes/heldout_mlm.py measures,
recipes/pretrain.py saves); the run's report (pipeline/report/training.py) and the export's
model card (trainer/export/card.py) read it. It lives in common because the readers may not
import recipes, which uses them.

The record: what heldout_accuracy returns ("accuracy", "tokens", "rows", "unigram_accuracy",
"unigram_token"), then "model" and "hdf5" (what was measured on what), "line" (the measure in
words) and, when known, "step" (the checkpoint the export was made from). In words for a page
or a card: common/numbers.py's baseline_text.
"""
from __future__ import annotations

import json
from pathlib import Path

from common.atomic import write_text_atomic

HELDOUT = "heldout_mlm.json"


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
