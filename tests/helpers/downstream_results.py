"""A results.json as the fine-tuning CLI writes it (the contract pipeline/report/downstream.py
reads), written by hand for the report's tests; SUITE: a suite.json (--suite's table: ours, its
random init and one compared model on one task), for the card's and the report's tests."""
from __future__ import annotations

import json
from pathlib import Path

RESULTS = {
    "task": "ner", "metric": "entity_f1", "probe": "data/hu", "run": "runs/hu_p1", "seeds": [1, 2, 3],
    "pretrained": {"mean": 0.61, "sd": 0.012, "scores": [0.6, 0.62, 0.61]},
    "random_init": {"mean": 0.42, "sd": 0.02, "scores": [0.4, 0.44, 0.42]},
    "checkpoints": [
        {"step": 400, "checkpoint": "runs/hu_p1/checkpoints/ckpt_400", "mean": 0.58, "sd": 0.015,
         "scores": [0.57, 0.6, 0.57]},
        {"step": 200, "checkpoint": "runs/hu_p1/checkpoints/ckpt_200", "mean": 0.5, "sd": 0.01,
         "scores": [0.49, 0.5, 0.51]},
    ],
}


def write_results(path: Path, drop=(), **changes) -> Path:
    """RESULTS (less the keys in `drop`, with `changes`) written to `path` (a folder gets
    results.json); the file's path."""
    if path.suffix != ".json":
        path = path / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: v for k, v in RESULTS.items() if k not in drop} | changes
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


SUITE = {"suite": "hu", "seeds": [1, 2, 3],
         "models": [{"label": "runs/hu_p1", "ours": True}, {"label": "bert-base-multilingual-cased"}],
         "rows": [{"name": "wikiann-hu", "task": "ner", "dataset": "unimelb-nlp/wikiann", "config": "hu",
                   "split": "test", "metric": "entity_f1", "model": "runs/hu_p1", "variant": v,
                   "mean": m, "sd": 0.01, "scores": [m] * 3, "seeds": [1, 2, 3], "results": "x"}
                  for v, m in (("pretrained", 0.812), ("random_init", 0.403))]
         + [{"name": "wikiann-hu", "task": "ner", "dataset": "unimelb-nlp/wikiann", "config": "hu",
             "split": "test", "metric": "entity_f1", "model": "bert-base-multilingual-cased",
             "variant": "pretrained", "mean": 0.855, "sd": 0.02, "scores": [0.855] * 3,
             "seeds": [1, 2, 3], "results": "y"}]}
