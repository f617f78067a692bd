"""The one table of fine-tuning tasks: what --task takes, and for each its head, its headline
metric and its default length. The CLI (cli.py), the metrics (metrics.py), the task classes
(tasks.py: one per kind of head), the model's head (source.py) and the datasets' rows
(hf_datasets.py) read it; none lists the tasks again.

    TASKS["ner"].kind        # "token": a label per word (tasks.TaggingTask, a token-classification head)
    TASKS["qa"].metric       # "f1": results.json's headline number
    TASK_NAMES               # ("ner", "pos", "classify", "qa"): --task's choices

A new task with a head that exists is one row here (and its reader, if its files are new);
a new kind of head is a task class in tasks.py and its Auto class in HEADS. Torch-free.
"""
from __future__ import annotations

from dataclasses import dataclass

# the kinds of head: transformers' Auto class of each
HEADS = {
    "token": "AutoModelForTokenClassification",
    "sequence": "AutoModelForSequenceClassification",
    "qa": "AutoModelForQuestionAnswering",
}


@dataclass(frozen=True)
class FinetuneTask:
    name: str          # --task
    kind: str          # its head (HEADS), and the task class that reads and scores it (tasks.py)
    metric: str        # the headline metric (metrics.py computes it)
    scored_by: str     # --task's help: the metrics, in words
    max_length: int = 128   # --max_seq_length's default, in pieces


TASKS = {t.name: t for t in (
    FinetuneTask("ner", "token", "entity_f1", "entity F1"),
    FinetuneTask("pos", "token", "accuracy", "accuracy"),
    FinetuneTask("classify", "sequence", "accuracy", "accuracy, macro-F1"),
    FinetuneTask("qa", "qa", "f1", "EM/F1", max_length=384),   # a question and a context window
)}
TASK_NAMES = tuple(TASKS)
