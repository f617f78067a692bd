"""Section `downstream`: how well a run's checkpoints do on a probe task once fine-tuned (over
several seeds, with their spread), beside the same architecture trained from random weights.

Reads results.json as the fine-tuning CLI (trainer/finetune) writes it: RUN_DIR/downstream/
results.json for each `--run RUN_DIR`, and the files (or folders holding one) given with
`--downstream` (a benchmark suite's suite.json, or a folder holding one, is shown as its table:
pipeline/report/suite.py). Its contract:

    {"task": "ner", "metric": "entity_f1", "probe": "data/uk", "run": "runs/uk_p1",
     "seeds": [1, 2, 3],
     "pretrained":  {"mean": 0.61, "sd": 0.012, "scores": [0.6, 0.62, 0.61]},
     "random_init": {"mean": 0.42, "sd": 0.02, "scores": [0.4, 0.44, 0.42]},        # optional
     "checkpoints": [{"step": 200, "checkpoint": "...", "mean": 0.5, "sd": 0.01,     # optional
                      "scores": [0.49, 0.5, 0.51]}, ...]}

Scores are shown as given (fractions for F1/accuracy, percents for QA's f1/exact_match), with
the metric's name. A file that does not follow the contract is a warning, never a crash.

Usage:
    sec = downstream_section(runs=[Path("runs/uk_p1")], extra=[Path("elsewhere/results.json")])
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .figures import score_chart
from .page import Section, esc, num, table
from .suite import SUITE, suite_block

RESULTS = "results.json"      # written by the fine-tuning CLI
DOWNSTREAM = "downstream"     # its default folder inside a trainer output dir


class ResultsError(ValueError):
    """A results.json that does not follow the contract; the message says what is wrong."""


@dataclass
class Score:
    mean: float
    sd: float | None
    seeds: int | None          # how many fine-tuning runs the mean is over


@dataclass
class Results:
    path: Path
    task: str
    metric: str
    pretrained: Score
    random_init: Score | None = None
    checkpoints: list[tuple[int, Score]] = field(default_factory=list)   # by step
    about: dict = field(default_factory=dict)                            # probe, run, seeds


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _score(obj, where: str, seeds) -> Score:
    if not isinstance(obj, dict):
        raise ResultsError(f"'{where}' is not an object with mean, sd and scores")
    if not _number(obj.get("mean")):
        raise ResultsError(f"'{where}.mean' is missing or not a finite number")
    sd = obj.get("sd")
    if sd is not None and not (_number(sd) and sd >= 0):
        raise ResultsError(f"'{where}.sd' is not a number ≥ 0")
    scores = obj.get("scores")
    if scores is not None and not (isinstance(scores, list) and all(_number(s) for s in scores)):
        raise ResultsError(f"'{where}.scores' is not a list of numbers")
    n = len(scores) if scores is not None else (len(seeds) if isinstance(seeds, list) else None)
    return Score(float(obj["mean"]), None if sd is None else float(sd), n)


def read_results(path: Path) -> Results:
    """The results.json at `path`, checked against the contract (ResultsError if it is not)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ResultsError("not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"not valid JSON ({exc})") from None
    except OSError as exc:
        raise ResultsError(f"cannot be read ({exc.strerror or exc})") from None
    if not isinstance(raw, dict):
        raise ResultsError("not a JSON object")
    for key in ("task", "metric"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ResultsError(f"'{key}' is missing or not a string")
    if "pretrained" not in raw:
        raise ResultsError("'pretrained' is missing")
    seeds = raw.get("seeds")
    res = Results(Path(path), raw["task"], raw["metric"], _score(raw["pretrained"], "pretrained", seeds),
                  about={k: raw[k] for k in ("probe", "run", "seeds") if raw.get(k) is not None})
    if raw.get("random_init") is not None:
        res.random_init = _score(raw["random_init"], "random_init", seeds)
    points = raw.get("checkpoints") or []
    if not isinstance(points, list):
        raise ResultsError("'checkpoints' is not a list")
    for i, point in enumerate(points):
        step = point.get("step") if isinstance(point, dict) else None
        if not (isinstance(step, int) and not isinstance(step, bool) and step >= 0):
            raise ResultsError(f"'checkpoints[{i}].step' is missing or not a whole number ≥ 0")
        res.checkpoints.append((step, _score(point, f"checkpoints[{i}]", seeds)))
    res.checkpoints.sort(key=lambda p: p[0])
    return res


def _in_folder(folder: Path) -> list[Path]:
    """FOLDER/results.json, a suite's FOLDER/suite.json (its table stands for the results of
    its sub-folders), else the results.json of its sub-folders (one per task)."""
    for name in (RESULTS, SUITE):
        if (folder / name).is_file():
            return [folder / name]
    return sorted(p for p in folder.glob(f"*/{RESULTS}") if p.is_file())


def results_files(runs, extra) -> tuple[list[Path], list[str]]:
    """(the results.json files to show, warnings about `extra` paths that hold none): each
    run's downstream/ folder (absent is fine: not every run was fine-tuned), then `extra`."""
    files, warnings = [], []
    for run in runs:
        files += _in_folder(Path(run) / DOWNSTREAM)
    for path in map(Path, extra):
        found = [path] if path.is_file() else _in_folder(path) if path.is_dir() else []
        if not found:
            warnings.append(f"--downstream {path}: no {RESULTS} there")
        files += found
    seen, unique = set(), []
    for f in files:
        if f.resolve() not in seen:
            seen.add(f.resolve())
            unique.append(f)
    return unique, warnings


def _fmt(values: list[float]):
    """A formatter for mean ± sd: three decimals for fractions, two for percents."""
    digits = 3 if all(abs(v) <= 1 for v in values) else 2
    return lambda s: (f"{s.mean:.{digits}f} ± {s.sd:.{digits}f}" if s.sd is not None
                      else f"{s.mean:.{digits}f}")


def _one(sec: Section, res: Results) -> None:
    title = f"{res.task}: {res.metric}"
    sec.add(f"<h3>{esc(title)} <small>({esc(res.path)})</small></h3>")
    about = res.about
    facts = [f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in about.items()]
    if facts:
        sec.add(f'<p class="note">{esc("; ".join(facts))}</p>')
    scores = [s for _, s in res.checkpoints] + [res.pretrained] + ([res.random_init] if res.random_init else [])
    fmt = _fmt([s.mean for s in scores])
    if res.checkpoints:
        base = None
        if res.random_init is not None:
            base = ("random init (± sd)", res.random_init.mean, res.random_init.sd or 0.0)
        sec.add(score_chart([st for st, _ in res.checkpoints], [s.mean for _, s in res.checkpoints],
                            [s.sd or 0.0 for _, s in res.checkpoints],
                            title=f"{title} after fine-tuning, against pretraining step",
                            ylabel=res.metric, baseline=base,
                            reference=("pretrained (final)", res.pretrained.mean)))
    rows = [("step", f"{res.metric} (mean ± sd)", "seeds")]
    rows += [(num(st), fmt(s), num(s.seeds)) for st, s in res.checkpoints]
    rows.append(("pretrained", fmt(res.pretrained), num(res.pretrained.seeds)))
    if res.random_init is not None:
        rows.append(("random init", fmt(res.random_init), num(res.random_init.seeds)))
    sec.add(table(rows, numeric={1, 2}))
    if res.random_init is not None and res.pretrained.mean <= res.random_init.mean:
        sec.warn(f"{res.path}: on {res.task}, the pretrained model ({fmt(res.pretrained)}) does not "
                 f"beat the same model from random weights ({fmt(res.random_init)} {res.metric})")


def downstream_section(runs=(), extra=()) -> Section:
    sec = Section("downstream", "Downstream: the probe task after fine-tuning")
    files, warnings = results_files(runs, extra)
    for w in warnings:
        sec.warn(w)
    if not files and not warnings:
        sec.note(f"No fine-tuning results: `pipeline report --run RUN_DIR` shows RUN_DIR/{DOWNSTREAM}/"
                 f"{RESULTS} (the fine-tuning CLI writes it); `--downstream FILE_OR_DIR` (repeatable) "
                 "adds others.")
    for path in files:
        if path.name == SUITE:
            suite_block(sec, path)
            continue
        try:
            res = read_results(path)
        except ResultsError as exc:
            sec.warn(f"{path}: not a fine-tuning {RESULTS}: {exc}")
            continue
        _one(sec, res)
    return sec
