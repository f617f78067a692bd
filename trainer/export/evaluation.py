"""The model card's Evaluation section: the fine-tuning results of `python -m trainer.finetune`
(a suite's suite.json, or one task's results.json) as one table.

    text = evaluation_section(find_evaluation(run_dir, given=None))   # "" when there is none

Found at `--evaluation PATH` (a suite.json or results.json, or a folder holding one), else at
RUN_DIR/downstream/suite.json or RUN_DIR/downstream/results.json when the run has them. A file
that is not such results is a ValueError of one line (the export turns it into its error).
The models are named as a card may name them: ours "this model", another local folder by its
name, a Hub name as it is; never this machine's paths (fine-tuning records the paths it was given).
"""
from __future__ import annotations

import json
from pathlib import Path

from common.suite_table import markdown, result_rows
from trainer.export.card import source_name

OURS = "this model"

NAMES = ("suite.json", "results.json")


def find_evaluation(run_dir: Path | None, given=None) -> Path | None:
    """The results file to show: `given` (a file or a folder holding one), else the run's own."""
    if given is not None:
        path = Path(given)
        found = [path] if path.is_file() else [path / n for n in NAMES if (path / n).is_file()]
        if not found:
            raise ValueError(f"--evaluation {path}: no suite.json or results.json there; give "
                             "python -m trainer.finetune's --output_dir or one of those files")
        return found[0]
    if run_dir is None:
        return None
    return next((Path(run_dir) / "downstream" / n for n in NAMES
                 if (Path(run_dir) / "downstream" / n).is_file()), None)


def read_table(path: Path) -> dict:
    """suite.json as it is, or a results.json as a one-task table."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"--evaluation {path}: not a readable JSON file ({e})") from None
    try:
        if isinstance(doc, dict) and "rows" in doc:
            rows = doc["rows"]
            if not all(isinstance(r, dict) and {"name", "metric", "model", "variant", "mean"} <= set(r)
                       for r in rows):
                raise KeyError("rows")
            return doc
        name = (doc.get("dataset") or {}).get("name") or doc.get("probe") or doc["task"]
        rows = result_rows(doc, name=f"{doc['task']} ({Path(str(name)).name})", label=str(doc["model"]),
                           path=str(path))
        if not rows:
            raise KeyError("pretrained")
        return {"suite": doc["task"], "seeds": doc.get("seeds", []), "rows": rows,
                "models": [{"label": str(doc["model"]), "ours": True}]}
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"--evaluation {path}: not the suite.json or results.json that python -m "
                         f"trainer.finetune writes (no {e})") from None


def shown(table: dict) -> dict:
    """The table with its models named as the card shows them (the module docstring)."""
    names = {m["label"]: OURS if m.get("ours") else source_name(m["label"]) for m in table["models"]}
    return {**table, "models": [{**m, "label": names[m["label"]]} for m in table["models"]],
            "rows": [{**r, "model": names.get(r["model"], source_name(r["model"]))} for r in table["rows"]]}


def evaluation_section(path: Path | None) -> str:
    """The card's section (markdown), "" without results."""
    if path is None:
        return ""
    table = shown(read_table(path))
    seeds = ", ".join(map(str, table.get("seeds") or []))
    others = [m["label"] for m in table["models"] if not m.get("ours")]
    baseline = any(r["variant"] == "random_init" for r in table["rows"])
    lines = ["", "## Evaluation", "",
             f"Fine-tuned with wiki2bert's `python -m trainer.finetune` (suite `{table['suite']}`): "
             f"mean ± sample standard deviation over seeds {seeds}, on the test split (the "
             "validation split where there is none)."
             + (f" Compared with {', '.join(others)}, fine-tuned with the same recipe, rows and "
                "seeds." if others else "")
             + (" Random init is this architecture trained from random weights with the same "
                "settings." if baseline else ""), "", markdown(table).rstrip("\n"), ""]
    return "\n".join(lines)
