"""What a fine-tuning run leaves behind: one record per (variant, seed) kept as it finishes,
and results.json written last, complete or not at all.

Usage:
    cache = SeedCache(output_dir, settings_key)
    record = cache.get("pretrained", 1)          # None, or the finished seed's record
    cache.put("pretrained", 1, record)
    summary = aggregate([r1, r2, r3], "entity_f1")   # {"mean", "sd", "scores", ...}
    write_json_atomic(output_dir / "results.json", results)   # common/atomic.py

A seed's record is written when it finishes (runs/{variant}_seed{S}.json), keyed by the settings
and data that produced it: a rerun after an interruption trains only the seeds still missing,
and a rerun with other settings starts over.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from common.atomic import write_json_atomic


def settings_key(settings: dict, files: list[Path | None]) -> str:
    """A digest of the settings and of the data files' sizes and mtimes."""
    stamp = [settings] + [[str(f), f.stat().st_size, f.stat().st_mtime_ns] if f else None
                          for f in files]
    return hashlib.sha256(json.dumps(stamp, sort_keys=True, default=str).encode()).hexdigest()[:16]


def mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def aggregate(records: list[dict], metric: str) -> dict:
    """{"mean", "sd", "scores", "seeds", "validation", "examples_per_s", "all"} over seeds."""
    scores = [r["test"][metric] for r in records]
    mean, sd = mean_sd(scores)
    val = [r["validation"][metric] for r in records if r.get("validation")]
    out = {"mean": round(mean, 6), "sd": round(sd, 6), "scores": [round(s, 6) for s in scores],
           "seeds": [r["seed"] for r in records]}
    if val:
        vm, vsd = mean_sd(val)
        out["validation"] = {"mean": round(vm, 6), "sd": round(vsd, 6)}
    speeds = [r["train"]["examples_per_s"] for r in records if r["train"].get("examples_per_s")]
    if speeds:
        out["examples_per_s"] = round(sorted(speeds)[len(speeds) // 2], 2)
    out["all"] = [{"seed": r["seed"], "test": r["test"], "validation": r.get("validation"),
                   "train": r["train"]} for r in records]
    return out


class SeedCache:
    def __init__(self, output_dir: Path, key: str, learning_rate: float | None = None):
        self.folder = Path(output_dir) / "runs"
        self.key = key
        # a learning-rate grid keeps one record per rate
        self.tag = "" if learning_rate is None else f"_lr{learning_rate:g}"

    def path(self, variant: str, seed: int) -> Path:
        return self.folder / f"{variant}{self.tag}_seed{seed}.json"

    def get(self, variant: str, seed: int) -> dict | None:
        try:
            record = json.loads(self.path(variant, seed).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return record if isinstance(record, dict) and record.get("key") == self.key else None

    def put(self, variant: str, seed: int, record: dict) -> None:
        write_json_atomic(self.path(variant, seed), dict(record, key=self.key))
