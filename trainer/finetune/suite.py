"""A language's benchmarks in one go, with other models beside ours in one table.

    python -m trainer.finetune --model runs/hu_p1 --suite hu --output_dir ft/hu --seeds 1,2,3 \
        --baseline random-init --compare bert-base-multilingual-cased SZTAKI-HLT/hubert-base-cc

`--suite LANG` reads suites.json beside this module: WikiANN's NER where LANG is one of its
languages, LANG's own tasks (hu: UD hu_szeged UPOS), XNLI where LANG is in it. `--suite FILE`
is a user's own: {"name": "...", "tasks": [{"name", "dataset", "config"?, "revision"?, "task"?,
"tag_column"?, "text_column"?, "text_pair_column"?, "label_column"?, "train_split"?,
"validation_split"?, "test_split"?, "language"?}]}. `--compare` without `--suite` compares on
the command's own task. Every dataset is opened and checked before anything is trained (and
before anything is written in --output_dir); then each task trains every model over the seeds
into OUTPUT_DIR/TASK/MODEL/ (results.json as a single run writes it, resumable), and
OUTPUT_DIR/suite.json and suite.md hold the table (common/suite_table.py).
"""
from __future__ import annotations

import argparse
import json
import logging
import re
from pathlib import Path

from common.os_errors import check_free_space
from common.suite_table import markdown, result_rows, write_table
from trainer.finetune.hf_datasets import dataset_task
from trainer.finetune.plan import default_length, summary_line
from trainer.finetune.readers import FinetuneDataError
from trainer.finetune.runner import finetune_model
from trainer.finetune.source import HUB_NAME, hub_model
from trainer.finetune.tasks import make_task

log = logging.getLogger("trainer.finetune")
REGISTRY = Path(__file__).with_name("suites.json")
ENTRY_KEYS = ("name", "dataset", "config", "revision", "task", "tag_column", "text_column",
              "text_pair_column", "label_column", "train_split", "validation_split", "test_split",
              "language")


def registry() -> dict:
    return json.loads(REGISTRY.read_text(encoding="utf-8"))


def language_entries(lang: str, reg: dict | None = None) -> list[dict]:
    """What suites.json runs for `lang` (FinetuneDataError if nothing)."""
    reg = reg or registry()
    out = []
    for family, own in (("wikiann", None), (None, reg["languages"].get(lang, [])), ("xnli", None)):
        if family is None:
            out += own
        elif lang in reg[family]["languages"]:
            spec = {k: v for k, v in reg[family].items() if k != "languages"}
            out.append({k: v.replace("{lang}", lang) if isinstance(v, str) else v
                        for k, v in spec.items()})
    if not out:
        raise FinetuneDataError(f"--suite {lang}: no suite for this language in {REGISTRY} (not "
                                "in WikiANN or XNLI, no tasks of its own); give --suite FILE with "
                                'your own tasks: {"tasks": [{"dataset": ..., "config": ...}]}')
    return out


def load_suite(spec: str) -> tuple[str, list[dict]]:
    """(the suite's name, its checked entries) for a language code or a suite FILE."""
    path = Path(spec)
    if not path.is_file():
        if path.suffix == ".json" or "/" in spec:
            raise FinetuneDataError(f"--suite {spec}: no such file; give a suite JSON file or a "
                                    "language code (e.g. hu)")
        return spec, [_checked(e, f"{REGISTRY} ({spec})", i) for i, e in
                      enumerate(language_entries(spec))]
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FinetuneDataError(f"--suite {path}: not a readable JSON file ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list) or not doc["tasks"]:
        raise FinetuneDataError(f'--suite {path}: expected {{"tasks": [{{"dataset": ..., '
                                '"config": ...}, ...]} with one task or more')
    return str(doc.get("name") or path.stem), [_checked(e, str(path), i)
                                               for i, e in enumerate(doc["tasks"])]


def _checked(entry, where: str, i: int) -> dict:
    if not isinstance(entry, dict) or not isinstance(entry.get("dataset"), str):
        raise FinetuneDataError(f"{where}: tasks[{i}] needs a \"dataset\" (a Hub name or a folder)")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise FinetuneDataError(f"{where}: tasks[{i}] has unknown key(s) {', '.join(unknown)}; "
                                f"known: {', '.join(ENTRY_KEYS)}")
    name = entry.get("name") or "-".join(str(x) for x in (Path(entry["dataset"]).name,
                                                         entry.get("config")) if x)
    return dict(entry, name=name)


def entry_args(args, entry: dict, base: Path | None) -> argparse.Namespace:
    """The command's settings with the entry's dataset, task, columns and splits (a relative
    folder is read from the suite file's folder when it is there)."""
    ns = argparse.Namespace(**vars(args))
    for key in ENTRY_KEYS[1:]:
        setattr(ns, {"config": "dataset_config", "revision": "dataset_revision"}.get(key, key),
                entry.get(key))
    if base is not None and not Path(entry["dataset"]).is_absolute() and (base / entry["dataset"]).exists():
        ns.dataset = str(base / entry["dataset"])
    return ns


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_") or "model"


def prepared_tasks(args) -> tuple[str, list[tuple[str, argparse.Namespace, object]]]:
    """(the suite's name, [(task name, its settings, the task)]): every dataset opened and
    checked before anything trains. A task's folder is its name made safe (slug)."""
    if not args.suite:   # --compare on the command's own task
        task = dataset_task(args) if args.dataset else make_task(args.task, args.files, args)
        name = slug(Path(args.dataset).name + (f"-{args.dataset_config}" if args.dataset_config
                                               else "")) if args.dataset else task.name
        return name, [(name, args, task)]
    suite, entries = load_suite(args.suite)
    base = Path(args.suite).parent if Path(args.suite).is_file() else None
    names = [e["name"] for e in entries]
    if len(set(names)) != len(names):
        raise FinetuneDataError(f"--suite {args.suite}: task names repeat ({', '.join(names)}); "
                                "give each a \"name\"")
    prepared = []
    for entry in entries:
        ns = entry_args(args, entry, base)
        prepared.append((entry["name"], ns, dataset_task(ns)))
    return suite, prepared


def run_suite(args, log_to_file) -> int:
    """Fine-tune --model (and --compare's models) on every task; write the table."""
    suite, prepared = prepared_tasks(args)
    for model in args.compare:   # each one there (or fetched) before the first run trains
        if not Path(model).exists():
            if not HUB_NAME.fullmatch(str(model)):
                raise FinetuneDataError(f"--compare {model}: no such folder (and not a Hub name)")
            hub_model(str(model))
    out = Path(args.output_dir)
    models = [{"label": str(args.model), "ours": True}] + [{"label": str(m)} for m in args.compare]
    runs = len(prepared) * len(args.seeds) * (len(models) + (1 if args.baseline else 0))
    # each run: its predictions (about a test split's text, twice for safety) and its record
    check_free_space(out, runs * (256 << 10) + (1 << 20), "the suite's predictions and results")
    log_to_file(args)
    log.info("suite %s: %d task(s) (%s) x %d model(s), seeds %s", suite, len(prepared),
             ", ".join(n for n, _, _ in prepared), len(models), ",".join(map(str, args.seeds)))
    rows = []
    for name, ns, task in prepared:
        if ns.max_seq_length is None:
            ns.max_seq_length = default_length(task.name)
        for i, model in enumerate(models):
            folder = out / slug(name) / ("ours" if i == 0 else slug(model["label"]))
            variants = ("pretrained", "random_init") if i == 0 and args.baseline else ("pretrained",)
            results = finetune_model(model["label"], task, ns, folder, variants=variants)
            log.info("%s, %s: %s", name, model["label"], summary_line(results))
            rows += result_rows(results, name=name, label=model["label"],
                                path=str((folder / "results.json").relative_to(out)))
    table = {"suite": suite, "seeds": list(args.seeds), "models": models, "rows": rows}
    write_table(out, table)
    print(markdown(table), end="")
    print(f"table: {out}/suite.md, {out}/suite.json")
    return 0
