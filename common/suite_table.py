"""The suite's one table: every task's score for every model, as JSON and markdown. Here in
common/ because two rooms share it: trainer/finetune writes it, trainer/export's card shows it.

    rows = result_rows(results, name="wikiann-hu", label="runs/hu_p1", path="wikiann-hu/ours/results.json")
    table = {"suite": "hu", "seeds": [1, 2, 3], "models": [...], "rows": rows}
    write_table(output_dir, table)          # OUTPUT_DIR/suite.json and suite.md, atomically
    print(markdown(table))

suite.json (read by the model card's Evaluation section and `pipeline report --downstream`):

    {"suite": "hu", "seeds": [1, 2, 3],
     "models": [{"label": "runs/hu_p1", "ours": true}, {"label": "bert-base-multilingual-cased"}],
     "rows": [{"name": "wikiann-hu", "task": "ner", "dataset": "unimelb-nlp/wikiann",
               "config": "hu", "split": "test", "metric": "entity_f1", "model": "runs/hu_p1",
               "variant": "pretrained", "mean": 0.61, "sd": 0.01, "scores": [...],
               "seeds": [1, 2, 3], "results": "wikiann-hu/ours/results.json"}, ...]}

`variant` is pretrained (the model as given) or random_init (the same architecture as ours
from random weights: the baseline).
"""
from __future__ import annotations

from pathlib import Path

from common.atomic import write_json_atomic, write_text_atomic

RANDOM_INIT = "random init"


def result_rows(results: dict, *, name: str, label: str, path: str) -> list[dict]:
    """One row per variant of a results.json (as trainer.finetune writes it)."""
    dataset = results.get("dataset") or {}
    base = {"name": name, "task": results["task"], "dataset": dataset.get("name"),
            "config": dataset.get("config"), "split": results.get("evaluated_on"),
            "metric": results["metric"], "model": label, "results": path}
    rows = []
    for variant in ("pretrained", "random_init"):
        if variant in results:
            r = results[variant]
            rows.append(dict(base, variant=variant, mean=r["mean"], sd=r["sd"],
                             scores=r["scores"], seeds=r.get("seeds", results.get("seeds"))))
    return rows


def score_text(mean: float, sd: float | None, percent: bool = False) -> str:
    digits = 2 if percent else 3
    return f"{mean:.{digits}f} ± {sd:.{digits}f}" if sd is not None else f"{mean:.{digits}f}"


def columns(table: dict) -> list[tuple[str, str]]:
    """(model label, variant) per score column: ours, its random init, then the others."""
    cols = []
    for m in table["models"]:
        cols.append((m["label"], "pretrained"))
        if m.get("ours") and any(r["variant"] == "random_init" for r in table["rows"]):
            cols.append((m["label"], "random_init"))
    return cols


def header(label: str, variant: str, ours: bool) -> str:
    if variant == "random_init":
        return RANDOM_INIT
    return f"{label} (ours)" if ours else label


def grid(table: dict) -> tuple[list[str], list[list[str]]]:
    """The table as a header and rows of text cells: one row per task, one column per model."""
    cols = columns(table)
    ours = {m["label"] for m in table["models"] if m.get("ours")}
    head = ["task", "dataset", "metric"] + [header(m, v, m in ours) for m, v in cols] + ["seeds"]
    by_task: dict[str, dict] = {}
    for r in table["rows"]:
        by_task.setdefault(r["name"], {})[(r["model"], r["variant"])] = r
    body = []
    for name, cells in by_task.items():
        first = next(iter(cells.values()))
        percent = any(abs(c["mean"]) > 1 for c in cells.values())
        dataset = " ".join(str(x) for x in (first.get("dataset"), first.get("config")) if x)
        scores = [score_text(cells[c]["mean"], cells[c]["sd"], percent) if c in cells else "–"
                  for c in cols]
        seeds = ",".join(map(str, first.get("seeds") or []))
        body.append([name, f"{dataset} ({first.get('split')})" if dataset else str(first.get("split")),
                     first["metric"], *scores, seeds])
    return head, body


def markdown(table: dict) -> str:
    head, body = grid(table)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def write_table(output_dir: Path, table: dict) -> None:
    """suite.md (a title, the table and what the numbers are) and suite.json, each atomically."""
    output_dir = Path(output_dir)
    text = (f"# Suite {table['suite']}\n\n{markdown(table)}\nMean ± sample standard deviation over "
            f"seeds {', '.join(map(str, table['seeds']))}; each model fine-tuned with the same "
            "recipe, rows and seeds; scores on the test split (the validation split where there "
            "is none).\n")
    write_text_atomic(output_dir / "suite.md", lambda fh: fh.write(text))
    write_json_atomic(output_dir / "suite.json", table)
