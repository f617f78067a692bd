"""A benchmark suite's table in the report's downstream section: every task's score for every
model, as `python -m trainer.finetune --suite` writes it to OUTPUT_DIR/suite.json.

Its contract (common/suite_table.py writes it):

    {"suite": "hu", "seeds": [1, 2, 3],
     "models": [{"label": "runs/hu_p1", "ours": true}, {"label": "bert-base-multilingual-cased"}],
     "rows": [{"name": "wikiann-hu", "task": "ner", "dataset": "unimelb-nlp/wikiann",
               "config": "hu", "split": "test", "metric": "entity_f1", "model": "runs/hu_p1",
               "variant": "pretrained" | "random_init", "mean": 0.61, "sd": 0.01,
               "scores": [...], "seeds": [1, 2, 3]}, ...]}

Usage:
    suite_block(section, Path("ft/hu/suite.json"))   # a table, or a warning if it is not one
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from common.suite_table import columns, header, score_text

from .page import Section, esc, table

SUITE = "suite.json"
ROW_KEYS = ("name", "metric", "model", "variant", "mean")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_suite(path: Path) -> dict:
    """suite.json checked against the contract (ValueError saying what is wrong)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a readable JSON file ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list) \
            or not isinstance(doc.get("models"), list):
        raise ValueError("not an object with 'models' and 'rows' lists")
    for i, model in enumerate(doc["models"]):
        if not isinstance(model, dict) or "label" not in model:
            raise ValueError(f"models[{i}] is not an object with a 'label'")
    for i, row in enumerate(doc["rows"]):
        if not isinstance(row, dict) or not all(k in row for k in ROW_KEYS):
            raise ValueError(f"rows[{i}] lacks one of {', '.join(ROW_KEYS)}")
        if not _number(row["mean"]) or not (row.get("sd") is None or _number(row["sd"])):
            raise ValueError(f"rows[{i}]: mean or sd is not a finite number")
    return doc


def _cell(row: dict | None, percent: bool) -> str:
    return "-" if row is None else score_text(row["mean"], row.get("sd"), percent)


def suite_block(sec: Section, path: Path) -> None:
    """The suite's table (one row a task, one column a model) and a warning wherever ours does
    not beat its random init."""
    try:
        doc = read_suite(path)
    except ValueError as exc:
        sec.warn(f"{path}: not a fine-tuning {SUITE}: {exc}")
        return
    ours = [m["label"] for m in doc["models"] if m.get("ours")]
    cols = [(label, variant, header(label, variant, label in ours)) for label, variant in columns(doc)]
    by_task: dict[str, dict] = {}
    for row in doc["rows"]:
        by_task.setdefault(row["name"], {})[(row["model"], row["variant"])] = row
    seeds = ", ".join(map(str, doc.get("seeds") or []))
    note = f"mean ± sd over seeds {seeds}; each model fine-tuned with the same recipe, rows and seeds"
    sec.add(f"<h3>Suite {esc(doc.get('suite', '?'))} <small>({esc(path)})</small></h3>",
            f'<p class="note">{esc(note)}</p>')
    rows = [("task", "dataset", "metric", *[c[2] for c in cols])]
    for name, cells in by_task.items():
        first = next(iter(cells.values()))
        percent = any(abs(c["mean"]) > 1 for c in cells.values())
        dataset = " ".join(str(x) for x in (first.get("dataset"), first.get("config")) if x)
        rows.append((name, dataset or "-", first["metric"],
                     *[_cell(cells.get((m, v)), percent) for m, v, _ in cols]))
        for label in ours:
            mine, base = cells.get((label, "pretrained")), cells.get((label, "random_init"))
            if mine and base and mine["mean"] <= base["mean"]:
                sec.warn(f"{path}: on {name}, {label} ({_cell(mine, percent)}) does not beat the "
                         f"same model from random weights ({_cell(base, percent)} {first['metric']})")
    sec.add(table(rows, numeric=set(range(3, 3 + len(cols)))))
