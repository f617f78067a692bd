"""A fine-tuning task from any dataset that `datasets` opens: a Hub name, a local folder in the
Hub's layout (a README card and data/), or a `save_to_disk` folder.

    task = dataset_task(args)          # args.dataset, dataset_config, *_split, column flags, task

The columns are found from the features (trainer/finetune/columns.py) and the rows become the
same TaggedSentence / TextExample / SquadData objects the file readers make, so the four tasks
train and score them exactly as they do files. Splits are the dataset's own (--train_split,
--validation_split, --test_split name others). Every problem is a FinetuneDataError of one
line: an uncached Hub name while offline or where the Hub does not answer (asked once, then the
cache alone: trainer/finetune/hub_reach.py; and how to point --dataset at a local copy), a
missing split (and the splits there are), columns that fit no task.
"""
from __future__ import annotations

import logging
from pathlib import Path

from trainer.finetune.columns import ColumnPlan, find_columns, qa_rows, tagging_rows, text_rows
from trainer.finetune.hub_reach import hub_or_cache
from trainer.finetune.readers import FinetuneDataError
from trainer.finetune.task_table import TASKS
from trainer.finetune.tasks import make_task

log = logging.getLogger("trainer.finetune")
SPLITS = ("train", "validation", "test")
OFFLINE_HINT = ("download it where there is a network (datasets.load_dataset(NAME, CONFIG)."
                "save_to_disk(DIR), or the Hub's Parquet files under DIR/data/) and give "
                "--dataset DIR; HF_DATASETS_OFFLINE=1 uses only what is cached")


def _is_saved(path: Path) -> bool:
    """A save_to_disk folder: a DatasetDict's dataset_dict.json or a Dataset's state.json."""
    return (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()


def open_dataset(name: str, config: str | None = None, revision: str | None = None):
    """A DatasetDict (or Dataset) for `name`: a save_to_disk folder, a local folder or a Hub
    name (from the cache when offline; `revision` a branch such as refs/convert/parquet)."""
    try:
        import datasets
    except ImportError:   # an install without the finetune extra's datasets
        raise FinetuneDataError("--dataset needs the datasets package: pip install "
                                "'wiki2bert[finetune]' (or pip install datasets)") from None
    datasets.disable_progress_bars()    # one line per seed, not a bar per split and file
    path = Path(name).expanduser()
    what = f"--dataset {name}" + (f" --dataset_config {config}" if config else "")
    try:
        if path.is_dir() and _is_saved(path):
            return datasets.load_from_disk(str(path))
        if path.exists() and not path.is_dir():
            raise FinetuneDataError(f"{what}: a file; give a dataset folder (a card and data/, or "
                                    "a save_to_disk folder) or a Hub name")
        if path.is_dir():
            return datasets.load_dataset(str(path), config)
        with hub_or_cache() as unreachable:   # no network: the cache alone, no retries
            try:
                return datasets.load_dataset(name, config, revision=revision)
            except (ConnectionError, FileNotFoundError) as e:
                if unreachable or isinstance(e, ConnectionError):
                    raise _not_cached(what, unreachable or _first_line(e)) from None
                raise
    except FinetuneDataError:
        raise
    except ConnectionError as e:    # offline (HF_DATASETS_OFFLINE/HF_HUB_OFFLINE) or no network
        raise _not_cached(what, _first_line(e)) from None
    except ValueError as e:         # a config the dataset does not have, among others
        raise FinetuneDataError(f"{what}: {_first_line(e)}") from None
    except (FileNotFoundError, OSError) as e:
        hint = ("no such folder, and no such dataset on the Hub or in the cache" if not path.exists()
                else "no data files that datasets can read there")
        raise FinetuneDataError(f"{what}: {hint} ({_first_line(e)}); give a Hub name, a folder with "
                                "a README card and data/*.parquet, or a save_to_disk folder") from None


def _not_cached(what: str, why: str) -> FinetuneDataError:
    return FinetuneDataError(f"{what}: not in the datasets cache and the Hub cannot be reached ({why}); "
                             f"{OFFLINE_HINT}")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def choose_splits(found: list[str], args, what: str) -> dict[str, str]:
    """{"train": NAME, "validation": NAME, "test": NAME?}: the dataset's splits that play each
    part (--*_split, else train/validation/test; test is optional unless named)."""
    chosen = {}
    for part in SPLITS:
        given = getattr(args, f"{part}_split", None)
        name = given or part
        if name in found:
            chosen[part] = name
        elif given or part != "test":
            raise FinetuneDataError(
                f"{what}: no split {name!r} (splits: {', '.join(found)}); name the split to "
                f"use with --{part}_split")
    return chosen


def dataset_task(args):
    """The task for --dataset: loaded, its columns found, its rows read (FinetuneDataError)."""
    name, config = args.dataset, getattr(args, "dataset_config", None)
    label = name + (f" {config}" if config else "")
    data = open_dataset(name, config, getattr(args, "dataset_revision", None))
    if not hasattr(data, "keys"):                 # a single Dataset saved to disk
        data = {"train": data}
    splits = choose_splits(list(data.keys()), args, f"--dataset {label}")
    where = {part: f"{label} [{split}]" for part, split in splits.items()}
    plan = find_columns(data[splits["train"]].features, args, f"--dataset {label}")
    args.task = plan.task
    rows = {}
    for part, split in list(splits.items()):
        try:
            rows[part] = _rows(plan, data[split], where[part])
        except FinetuneDataError as exc:
            if part != "test" or getattr(args, "test_split", None):
                raise
            # a test split taken by its name whose labels are hidden (GLUE's are all -1): scored
            # on validation alone, as for a dataset without a test split
            log.warning("%s; left out: the scores are validation's (--test_split names another)", exc)
            del splits[part], where[part]
    args.files = {part: where.get(part) for part in SPLITS}
    args.data_stamp = {part: getattr(data[split], "_fingerprint", None) for part, split in splits.items()}
    args.dataset_info = {"name": name, "config": config, "splits": splits, "columns": {
        k: v for k, v in vars(plan).items() if v is not None and not k.endswith("_names")}}
    log.info("dataset %s: %s from %s", label, plan.task, _columns_text(plan))
    return make_task(plan.task, args.files, args, data=rows)


def _rows(plan: ColumnPlan, split, where: str):
    if TASKS[plan.task].kind == "token":
        return tagging_rows(split, plan, where)
    if TASKS[plan.task].kind == "sequence":
        return text_rows(split, plan, where)
    return qa_rows(split, where)


def _columns_text(plan: ColumnPlan) -> str:
    if TASKS[plan.task].kind == "token":
        return f"tokens column {plan.tokens}, tag column {plan.tags}"
    if TASKS[plan.task].kind == "sequence":
        return (f"text column {plan.text}" + (f", pair {plan.text_pair}" if plan.text_pair else "")
                + f", label column {plan.label}")
    return "question, context, answers"
