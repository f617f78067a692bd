"""Which task a dataset's columns feed, found from its features, and its rows as the objects the
file readers make (TaggedSentence, TextExample, a SquadData).

    plan = find_columns(features, options)   # ColumnPlan(task="ner", tokens="tokens", tags="ner_tags", ...)
    sentences = tagging_rows(dataset_split, plan, "wikiann hu [train]")
    examples = text_rows(dataset_split, plan, where)
    squad = qa_rows(dataset_split, where)     # answers located in the context as read_squad does

Found from the features (datasets' own types): a tagging task is a tokens column (a list of
strings) with a tag column that is a list of ClassLabel (WikiANN's ner_tags, UD's upos; the label
names come from the feature); classification a text column (or a pair) with a label column;
QA SQuAD's question / context / answers. --tag_column, --text_column, --text_pair_column and
--label_column name the columns where the guess is not wanted; --task picks among tasks. A
tagging task is ner when its tag names are IOB tags (O, B-X, I-X), pos otherwise. A dataset
that fits no task is a FinetuneDataError naming its columns and the flags that fix it.
"""
from __future__ import annotations

from dataclasses import dataclass

from trainer.finetune.readers import FinetuneDataError, TaggedSentence, TextExample
from trainer.finetune.squad import SquadData, parse_squad

TOKEN_NAMES = ("tokens", "words", "form", "forms")
TAG_NAMES = {"ner": ("ner_tags", "ner", "tags", "labels"), "pos": ("upos", "pos_tags", "pos", "tags")}
TEXT_PAIRS = (("premise", "hypothesis"), ("sentence1", "sentence2"), ("question1", "question2"),
              ("text_a", "text_b"))
TEXT_NAMES = ("text", "sentence", "review", "content", "document")
FLAGS = ("--task, --tag_column (tagging), --text_column/--text_pair_column/--label_column "
         "(classification)")


@dataclass
class ColumnPlan:
    task: str                       # ner, pos, classify, qa
    tokens: str | None = None       # tagging
    tags: str | None = None
    tag_names: list[str] | None = None   # a ClassLabel's names; None: the column holds strings
    text: str | None = None         # classification
    text_pair: str | None = None
    label: str | None = None
    label_names: list[str] | None = None


def describe(features) -> str:
    """'tokens (list of string), ner_tags (list of ClassLabel)': what a message shows."""
    return ", ".join(f"{name} ({_kind(f)})" for name, f in features.items())


def _kind(feature) -> str:
    from datasets import ClassLabel, Value

    inner = _inner(feature)
    if inner is not None:
        return f"list of {_kind(inner)}"
    if isinstance(feature, ClassLabel):
        return "ClassLabel"
    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, dict):
        return "dict"
    return type(feature).__name__


def _inner(feature):
    """The element feature of a list column (Sequence or List, by datasets version), or None."""
    from datasets import Sequence

    try:
        from datasets import List
    except ImportError:   # datasets < 4 has Sequence only
        List = Sequence   # noqa: N806
    if isinstance(feature, (Sequence, List)):
        inner = feature.feature
        return inner if not isinstance(inner, dict) else None
    if isinstance(feature, list) and len(feature) == 1:
        return feature[0]
    return None


def _is_string(feature) -> bool:
    from datasets import Value

    return isinstance(feature, Value) and feature.dtype in ("string", "large_string")


def _is_label(feature) -> bool:
    from datasets import ClassLabel, Value

    return isinstance(feature, ClassLabel) or (
        isinstance(feature, Value) and (feature.dtype.startswith("int") or _is_string(feature)))


def is_iob(names: list[str]) -> bool:
    return any(n != "O" for n in names) and all(n == "O" or n[:2] in ("B-", "I-") for n in names)


def _need(features, name: str | None, flag: str) -> None:
    if name is not None and name not in features:
        raise FinetuneDataError(f"{flag} {name}: no such column (columns: {describe(features)})")


def find_columns(features, options, where: str) -> ColumnPlan:
    """The task and its columns for a dataset with these features (FinetuneDataError if none)."""
    task = getattr(options, "task", None)
    given = {flag: getattr(options, attr, None) for flag, attr in (
        ("--tag_column", "tag_column"), ("--text_column", "text_column"),
        ("--text_pair_column", "text_pair_column"), ("--label_column", "label_column"))}
    for flag, name in given.items():
        _need(features, name, flag)
    if task == "qa" or (task is None and {"question", "context", "answers"} <= set(features)):
        missing = [c for c in ("question", "context", "answers") if c not in features]
        if missing:
            raise FinetuneDataError(f"{where}: --task qa needs SQuAD's columns question, context "
                                    f"and answers; {', '.join(missing)} missing (columns: "
                                    f"{describe(features)})")
        return ColumnPlan("qa")
    if task in (None, "ner", "pos") and given["--text_column"] is None:
        plan = _tagging(features, task, given["--tag_column"], where)
        if plan is not None:
            return plan
    if task in (None, "classify"):
        plan = _classify(features, given, where)
        if plan is not None:
            return plan
    wanted = {"ner": "a tokens column (a list of strings) and a tag column (a list of ClassLabel)",
              "pos": "a tokens column (a list of strings) and a tag column (a list of ClassLabel)",
              "classify": "a text column (string) and a label column (ClassLabel)"}
    needs = wanted.get(task, "tagging a tokens column (list of strings) and a tag column (list of "
                             "ClassLabel), classification a text column and a label column, qa "
                             "question/context/answers")
    raise FinetuneDataError(f"{where}: its columns {describe(features)} fit no "
                            f"{'task' if task is None else task + ' task'} ({needs}); name the "
                            f"columns with {FLAGS}")


def _tagging(features, task: str | None, tag_column: str | None, where: str) -> ColumnPlan | None:
    from datasets import ClassLabel

    tokens = next((n for n in TOKEN_NAMES if n in features and _is_string(_inner(features[n]) or {})),
                  None)
    if tokens is None:
        tokens = next((n for n, f in features.items() if n != tag_column and _is_string(_inner(f) or {})),
                      None)
    if tokens is None:
        return None
    if tag_column is not None:
        inner = _inner(features[tag_column])
        if isinstance(inner, ClassLabel):
            names = list(inner.names)
        elif inner is not None and _is_string(inner):
            names = None
        else:
            raise FinetuneDataError(
                f"{where}: --tag_column {tag_column} is {_kind(features[tag_column])}: a tag "
                "column is a list of ClassLabel (its names are the tags) or a list of strings")
        return ColumnPlan(_tag_task(task, names, tag_column), tokens=tokens, tags=tag_column,
                          tag_names=names)
    labelled = [n for n, f in features.items() if isinstance(_inner(f), ClassLabel)]
    if not labelled:
        numbers = [n for n, f in features.items() if n != tokens and _inner(f) is not None
                   and not _is_string(_inner(f))]
        if numbers and task in ("ner", "pos"):
            raise FinetuneDataError(
                f"{where}: tag column {numbers[0]} is {_kind(features[numbers[0]])}, not a "
                "ClassLabel, so its tag names are unknown; give --tag_column with a column of "
                f"ClassLabel or string tags (columns: {describe(features)})")
        if numbers and task is None and not any(_is_label(f) for f in features.values()):
            raise FinetuneDataError(
                f"{where}: tag column {numbers[0]} is {_kind(features[numbers[0]])}, not a "
                "ClassLabel, so its tag names are unknown; give --tag_column with a column of "
                f"ClassLabel or string tags, or --task (columns: {describe(features)})")
        return None
    preferred = TAG_NAMES.get(task or "", ()) + TAG_NAMES["ner"] + TAG_NAMES["pos"]
    column = next((n for n in preferred if n in labelled), labelled[0])
    names = list(_inner(features[column]).names)
    return ColumnPlan(_tag_task(task, names, column), tokens=tokens, tags=column, tag_names=names)


def _tag_task(task: str | None, names: list[str] | None, column: str) -> str:
    if task is not None:
        return task
    if names is None:
        return "ner" if "ner" in column else "pos"
    return "ner" if is_iob(names) else "pos"


def _classify(features, given: dict, where: str) -> ColumnPlan | None:
    from datasets import ClassLabel

    label = given["--label_column"]
    if label is None:
        label = "label" if "label" in features else next(
            (n for n, f in features.items() if isinstance(f, ClassLabel)), None)
    if label is None or not _is_label(features[label]):
        if given["--label_column"] is not None:
            raise FinetuneDataError(f"{where}: --label_column {label} is {_kind(features[label])}; "
                                    "a label column is a ClassLabel, whole numbers or strings")
        return None
    text, pair = given["--text_column"], given["--text_pair_column"]
    if text is None:
        found = next((p for p in TEXT_PAIRS if set(p) <= set(features)), None)
        if found is not None:
            text, pair = found[0], pair or found[1]
        else:
            text = next((n for n in TEXT_NAMES if n in features), None)
            strings = [n for n, f in features.items() if _is_string(f) and n != label]
            if text is None and len(strings) in (1, 2):
                text = strings[0]
                pair = pair or (strings[1] if len(strings) == 2 else None)
    if text is None:
        return None
    for flag, name in (("--text_column", text), ("--text_pair_column", pair)):
        if name is not None and not _is_string(features[name]):
            raise FinetuneDataError(f"{where}: {flag} {name} is {_kind(features[name])}, not text")
    names = list(features[label].names) if isinstance(features[label], ClassLabel) else None
    return ColumnPlan("classify", text=text, text_pair=pair, label=label, label_names=names)


def tagging_rows(rows, plan: ColumnPlan, where: str) -> list[TaggedSentence]:
    """One TaggedSentence a row (line: the row's 1-based number); rows without tokens skipped."""
    out = []
    for i, (words, tags) in enumerate(zip(rows[plan.tokens], rows[plan.tags]), start=1):
        if len(words) != len(tags):
            raise FinetuneDataError(f"{where}: row {i} has {len(words)} tokens and {len(tags)} "
                                    f"tags in {plan.tags}; they must be as many")
        if not words:
            continue
        names = [plan.tag_names[t] for t in tags] if plan.tag_names is not None else list(tags)
        out.append(TaggedSentence(list(words), names, i))
    if not out:
        raise FinetuneDataError(f"{where}: no rows with tokens; nothing to train or score on")
    return out


def text_rows(rows, plan: ColumnPlan, where: str) -> list[TextExample]:
    """One TextExample a row; rows whose label is -1 (ClassLabel's 'no label') are left out."""
    out = []
    pairs = rows[plan.text_pair] if plan.text_pair else [None] * len(rows)
    for i, (text, pair, label) in enumerate(zip(rows[plan.text], pairs, rows[plan.label]), start=1):
        if label is None or (plan.label_names is not None and label < 0):
            continue
        name = plan.label_names[label] if plan.label_names is not None else str(label)
        out.append(TextExample(text or "", None if plan.text_pair is None else pair or "", name, i))
    if not out:
        raise FinetuneDataError(f"{where}: no labelled rows; nothing to train or score on")
    return out


def qa_rows(rows, where: str) -> SquadData:
    """SQuAD's columns as a SQuAD document, checked and located by the SQuAD reader: v2 when a
    question has no answer."""
    paragraphs, v2 = [], False
    ids = rows["id"] if "id" in rows.column_names else [str(i) for i in range(len(rows))]
    for qid, question, context, answers in zip(ids, rows["question"], rows["context"], rows["answers"]):
        texts, starts = (answers or {}).get("text") or [], (answers or {}).get("answer_start") or []
        v2 = v2 or not texts
        paragraphs.append({"context": context, "qas": [{
            "id": qid, "question": question,
            "answers": [{"text": t, "answer_start": int(s)} for t, s in zip(texts, starts)]}]})
    doc = {"version": "v2.0" if v2 else "1.1", "data": [{"paragraphs": paragraphs}]}
    return parse_squad(doc, where)
