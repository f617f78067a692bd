"""The one table of fine-tuning tasks (trainer/finetune/task_table.py), read by the CLI, the
metrics, the task classes and the model's head."""
import pytest
import transformers

from trainer.finetune.cli import build_parser, parse
from trainer.finetune.metrics import METRIC_NAMES
from trainer.finetune.plan import default_length
from trainer.finetune.task_table import HEADS, TASK_NAMES, TASKS
from trainer.finetune.tasks import TASK_CLASSES


def test_the_cli_takes_the_tables_tasks_and_says_their_metrics():
    task = next(a for a in build_parser()._actions if a.dest == "task")
    assert tuple(task.choices) == TASK_NAMES == ("ner", "pos", "classify", "qa")
    assert task.help == ("ner (entity F1), pos (accuracy), classify (accuracy, macro-F1), qa (EM/F1); "
                         "--probe implies ner")


def test_every_task_has_a_metric_a_task_class_a_head_and_a_length():
    assert METRIC_NAMES == {name: t.metric for name, t in TASKS.items()}
    for task in TASKS.values():
        assert task.kind in TASK_CLASSES and hasattr(transformers, HEADS[task.kind])
    assert {name: default_length(name) for name in TASK_NAMES} == {
        "ner": 128, "pos": 128, "classify": 128, "qa": 384}


@pytest.mark.parametrize("task, length", [("qa", 384), ("ner", 128)])
def test_the_default_length_comes_from_the_table(tmp_path, task, length):
    files = [tmp_path / "train", tmp_path / "dev"]
    for f in files:
        f.write_text("x\n", encoding="utf-8")
    args = parse(["--model", str(tmp_path), "--task", task, "--train_file", str(files[0]),
                  "--validation_file", str(files[1]), "--output_dir", str(tmp_path / "out")])
    assert args.max_seq_length == length
