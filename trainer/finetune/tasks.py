"""The four tasks: which files they read, which model head they train, how they are scored
and how their predictions are written.

Usage:
    task = make_task("ner", train_file=..., validation_file=..., test_file=None, options=args)
    feats = task.features(tokenizer, task.train, max_length=128, train=True)
    scores, predictions = task.evaluate(model, tokenizer, task.test, max_length=128, device=d)
    task.write_predictions(path, task.test, predictions)

ner: CoNLL columns or CoNLL-U, IOB1 turned into IOB2, seqeval entity F1 (strict IOB2).
pos: CoNLL-U (UPOS unless --tag_column) or CoNLL columns, word accuracy.
classify: CSV/TSV/JSONL, one text or a pair; accuracy and macro-F1.
qa: SQuAD v1.1/v2.0 JSON; EM/F1 with the SQuAD normaliser for English, a language-neutral one
otherwise (--answer_normalizer), as MLQA and XQuAD report other languages.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from common.numbers import plural
from trainer.finetune import metrics, readers
from trainer.finetune.features import classification_features, gather_word_predictions, tagging_features
from trainer.finetune.loop import predict
from trainer.finetune.qa import decode_answers, qa_features
from trainer.finetune.task_table import TASKS


def unseen_label_notes(train_labels: list[str], files: dict, labels_by_split: dict) -> list[str]:
    """A counted note per evaluation file holding labels training never saw: the model cannot
    predict them, so they are scored as errors (honest, and no reason to refuse the file)."""
    notes = []
    for split in ("validation", "test"):
        if split in labels_by_split:
            unseen = readers.check_labels(train_labels, labels_by_split[split], files[split])
            if unseen:
                n = sum(label in unseen for label in labels_by_split[split])
                notes.append(f"{files[split]}: {plural(n, 'label')} of {plural(len(unseen), 'kind')} never seen in "
                             f"training ({', '.join(unseen[:5])}): scored as errors")
    return notes


class TaggingTask:
    kind = "token"

    def __init__(self, name: str, files: dict[str, Path | None], options, data=None):
        self.name = name
        self.metric = metrics.METRIC_NAMES[name]
        column = getattr(options, "tag_column", None)
        fmt = getattr(options, "data_format", None)
        self.splits = {}
        for split, path in files.items():
            if path is None:
                continue
            sentences = data[split] if data is not None else readers.read_tagging(
                path, column=column, fmt=fmt)
            if name == "ner":       # the scheme the entity metric scores, before any training
                readers.require_entity_tags(sentences, path)
                for s in sentences:
                    s.tags = readers.to_iob2(s.tags)
            self.splits[split] = sentences
        self.labels = sorted({t for s in self.splits["train"] for t in s.tags})
        self.notes = unseen_label_notes(self.labels, files, {
            split: [t for s in sentences for t in s.tags] for split, sentences in self.splits.items()})

    def size(self, split: str) -> int:
        return len(self.splits[split])

    def features(self, tokenizer, split: str, max_length: int, train: bool):
        ids = {lab: i for i, lab in enumerate(self.labels)}
        return tagging_features(tokenizer, self.splits[split], ids, max_length)

    def evaluate(self, model, tokenizer, split: str, max_length: int, device, batch_size: int):
        sentences = self.splits[split]
        feats = self.features(tokenizer, split, max_length, train=False)
        out = predict(model, feats.rows, device=device, pad_id=tokenizer.pad_token_id,
                      batch_size=batch_size)
        rows = [logits.argmax(-1) for logits in out["logits"]]
        pred = gather_word_predictions(feats, rows, dict(enumerate(self.labels)), sentences,
                                       default="O" if "O" in self.labels else self.labels[0])
        gold = [s.tags for s in sentences]
        scores = {"accuracy": metrics.token_accuracy(gold, pred)}
        if self.name == "ner":
            ent = metrics.entity_scores(gold, pred)
            scores.update({"entity_f1": ent["f1"], "precision": ent["precision"],
                           "recall": ent["recall"]})
        return scores, pred

    def write_predictions(self, fh, split: str, predictions) -> None:
        for s, tags in zip(self.splits[split], predictions):
            for word, gold, tag in zip(s.words, s.tags, tags):
                fh.write(f"{word}\t{gold}\t{tag}\n")
            fh.write("\n")

    prediction_suffix = ".conll"


class ClassificationTask:
    kind = "sequence"
    prediction_suffix = ".tsv"

    def __init__(self, name: str, files: dict[str, Path | None], options, data=None):
        self.name = name
        self.metric = metrics.METRIC_NAMES[name]
        cols = {"text_column": getattr(options, "text_column", "text") or "text",
                "text_pair_column": getattr(options, "text_pair_column", None),
                "label_column": getattr(options, "label_column", "label") or "label",
                "fmt": getattr(options, "data_format", None)}
        self.splits = {split: data[split] if data is not None
                       else readers.read_classification(path, **cols)
                       for split, path in files.items() if path is not None}
        self.labels = sorted({e.label for e in self.splits["train"]})
        if len(self.labels) < 2:
            raise readers.FinetuneDataError(
                f"{files['train']}: one label only ({self.labels[0]!r}); a classifier needs two "
                "or more: is --label_column the right column?")
        self.notes = unseen_label_notes(self.labels, files, {
            split: [e.label for e in examples] for split, examples in self.splits.items()})

    def size(self, split: str) -> int:
        return len(self.splits[split])

    def features(self, tokenizer, split: str, max_length: int, train: bool):
        ids = {lab: i for i, lab in enumerate(self.labels)}
        return classification_features(tokenizer, self.splits[split], ids, max_length)

    def evaluate(self, model, tokenizer, split: str, max_length: int, device, batch_size: int):
        feats = self.features(tokenizer, split, max_length, train=False)
        out = predict(model, feats.rows, device=device, pad_id=tokenizer.pad_token_id,
                      batch_size=batch_size)
        pred = [self.labels[int(logits.argmax())] for logits in out["logits"]]
        gold = [e.label for e in self.splits[split]]
        return metrics.classification_scores(gold, pred), pred

    def write_predictions(self, fh, split: str, predictions) -> None:
        fh.write("line\tgold\tpredicted\n")
        for e, label in zip(self.splits[split], predictions):
            fh.write(f"{e.line}\t{e.label}\t{label}\n")


class QATask:
    kind = "qa"
    labels = None
    prediction_suffix = ".json"

    def __init__(self, name: str, files: dict[str, Path | None], options, data=None):
        self.name = name
        self.metric = metrics.METRIC_NAMES[name]
        self.doc_stride = getattr(options, "doc_stride", 128) or 128
        self.data = {split: data[split] if data is not None else readers.read_squad(path)
                     for split, path in files.items() if path is not None}
        self.splits = {split: d.examples for split, d in self.data.items()}
        for split, d in self.data.items():
            if not d.examples:
                raise readers.FinetuneDataError(f"{files[split]}: no question with an answer found "
                                                "in its context; nothing to train or score on")
        self.version_2 = any(d.version_2 for d in self.data.values())
        lang = getattr(options, "language", None)
        self.normalizer = getattr(options, "answer_normalizer", None) or metrics.default_normalizer(lang)
        self.notes = [f"answer normaliser: {self.normalizer}"]
        for split, d in self.data.items():
            if d.relocated or d.not_found:
                self.notes.append(f"{files[split]}: {plural(d.relocated, 'answer')} found at another offset "
                                  f"than answer_start, {d.not_found} not in their context (dropped; "
                                  f"{plural(d.dropped_examples, 'question')} left without an answer dropped)")

    def size(self, split: str) -> int:
        return len(self.splits[split])

    def features(self, tokenizer, split: str, max_length: int, train: bool):
        return qa_features(tokenizer, self.splits[split], max_length=max_length,
                           doc_stride=self.doc_stride, train=train)

    def evaluate(self, model, tokenizer, split: str, max_length: int, device, batch_size: int):
        examples = self.splits[split]
        feats = self.features(tokenizer, split, max_length, train=False)
        out = predict(model, feats.rows, device=device, pad_id=tokenizer.pad_token_id,
                      batch_size=batch_size, outputs=("start_logits", "end_logits"))
        answers = decode_answers(feats, examples, out["start_logits"], out["end_logits"],
                                 version_2=self.version_2)
        gold = {e.id: [text for text, _ in e.answers] for e in examples}
        return metrics.squad_scores(answers, gold, self.normalizer), answers

    def write_predictions(self, fh, split: str, predictions) -> None:
        json.dump(predictions, fh, ensure_ascii=False, indent=1)


def make_task(name: str, files: dict[str, Path | None], options, data: dict | None = None):
    """The task `name` with its files read and checked (FinetuneDataError on bad input).
    `data`: the splits already read (a dataset's rows as TaggedSentence / TextExample lists, a
    SquadData for qa); `files` then holds the names that messages give each split."""
    cls = TASK_CLASSES[TASKS[name].kind]
    task = cls(name, files, options, data)
    task.features = _cached(task.features)
    return task


# the task class of each kind of head (task_table.py's kinds)
TASK_CLASSES = {"token": TaggingTask, "sequence": ClassificationTask, "qa": QATask}


def _cached(features):
    """Features are built once per tokenizer, split and length, not again for every seed (the
    tokenizer is kept in the key's value, so its id cannot be reused while cached)."""
    cache: dict = {}

    def wrapper(tokenizer, split: str, max_length: int, train: bool):
        key = (id(tokenizer), split, max_length, train)
        if key not in cache:
            cache[key] = (tokenizer, features(tokenizer, split, max_length, train))
        return cache[key][1]
    return wrapper


def label_counts(task) -> dict[str, int]:
    """How often each training label occurs (the summary's view of the data)."""
    if task.kind == "token":
        return dict(Counter(t for s in task.splits["train"] for t in s.tags))
    if task.kind == "sequence":
        return dict(Counter(e.label for e in task.splits["train"]))
    return {}
