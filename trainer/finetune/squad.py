"""Extractive QA files in SQuAD v1.1 / v2.0 JSON, with every answer located in its context.

    squad = read_squad("train-v2.0.json")
    squad.examples[0].answers        # [(text, char start in context)], [] when unanswerable
    squad.version_2                  # unanswerable questions exist: train/score a null answer
    squad.relocated, squad.not_found, squad.dropped_examples   # counts to report

File layout: {"version", "data": [{"title", "paragraphs": [{"context", "qas": [{"id",
"question", "answers": [{"text", "answer_start"}], "is_impossible"?}]}]}]}. A structural
problem is a FinetuneDataError naming the place ("data[3].paragraphs[0].qas[2]: no
'question'"). Wrong offsets are common in translated SQuAD sets (the answer text was
translated, its offset was not): such an answer is moved to the occurrence of its text
nearest the given offset, and counted. Import from `trainer.finetune.readers`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from trainer.finetune.textfiles import FinetuneDataError, PathLike, read_text

_LAYOUT = 'SQuAD JSON is {"version": ..., "data": [{"paragraphs": [{"context", "qas"}]}]}'


@dataclass
class QAExample:
    id: str
    question: str
    context: str
    answers: list[tuple[str, int]]   # (text, char start in context), located; empty for unanswerable
    is_impossible: bool


@dataclass
class SquadData:
    examples: list[QAExample]
    version_2: bool          # any example has is_impossible, or the file's "version" starts with "v2"
    relocated: int           # answers whose answer_start was wrong but whose text is elsewhere in the context
    not_found: int           # answers whose text is not in the context at all: dropped
    dropped_examples: int    # answerable questions left with no answer: dropped


_TYPE_NAMES = {list: "a list", str: "a string", dict: "an object", int: "a whole number",
               bool: "true or false"}


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _get(path: PathLike, obj: Any, key: str, kind: type, where: str,
         default: Any = ...) -> Any:
    """obj[key] checked to be of `kind` (bool is not taken for int), or `default` if absent."""
    if not isinstance(obj, dict):
        raise FinetuneDataError.at(path, f"{where}: {_json_type(obj)}, expected an object; "
                                         f"{_LAYOUT}")
    if key not in obj:
        if default is not ...:
            return default
        raise FinetuneDataError.at(path, f"{where}: no {key!r}; add it ({_LAYOUT})")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise FinetuneDataError.at(path, f"{where}.{key}: {_json_type(value)}, expected "
                                         f"{_TYPE_NAMES[kind]}; fix the value")
    return value


def _locate(context: str, text: str, start: int) -> tuple[int | None, bool]:
    """(start of `text` in `context`, whether it had to move): the given start if the text is
    there, else the occurrence nearest to it (the earlier one on a tie), else None."""
    if 0 <= start and context.startswith(text, start):
        return start, False
    found, i = [], context.find(text)
    while i >= 0:
        found.append(i)
        i = context.find(text, i + 1)
    if not found:
        return None, False
    return min(found, key=lambda s: (abs(s - start), s)), True


def read_squad(path: PathLike) -> SquadData:
    """Read and check a SQuAD file; answers are validated against their context (see module
    docstring). In a v2 file a question without "is_impossible" and with no answers is
    unanswerable (as Hugging Face's squad_v2 exports write it); in a v1 file it is dropped."""
    text = read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise FinetuneDataError.at(path, f"not valid JSON ({e.msg}, column {e.colno}); "
                                         f"{_LAYOUT}", e.lineno) from None
    return parse_squad(doc, path)


def parse_squad(doc: Any, path: PathLike) -> SquadData:
    """A SQuAD document already parsed from JSON (or built from a dataset's rows), checked as
    read_squad checks a file; `path` names it in messages."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise FinetuneDataError.at(path, f"no 'data' list at the top; {_LAYOUT}")
    version = doc.get("version")
    v2_file = isinstance(version, str) and version.lower().lstrip("v").startswith("2")
    examples: list[QAExample] = []
    first_seen: dict[str, str] = {}
    relocated = not_found = dropped = 0
    for a, article in enumerate(doc["data"]):
        for p, para in enumerate(_get(path, article, "paragraphs", list, f"data[{a}]")):
            where_p = f"data[{a}].paragraphs[{p}]"
            context = _get(path, para, "context", str, where_p)
            for q, qa in enumerate(_get(path, para, "qas", list, where_p)):
                where = f"{where_p}.qas[{q}]"
                raw_id = _get(path, qa, "id", object, where)
                if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
                    raise FinetuneDataError.at(path, f"{where}.id: {_json_type(raw_id)}, "
                                                     "expected a string; fix the value")
                qid = str(raw_id)
                if qid in first_seen:
                    # scores are kept per id: a repeated id would silently merge two questions
                    raise FinetuneDataError.at(path, f"{where}: id {qid!r} already used at "
                                                     f"{first_seen[qid]}; ids must be unique")
                first_seen[qid] = where
                question = _get(path, qa, "question", str, where)
                flag = _get(path, qa, "is_impossible", bool, where, None)
                raw_answers = _get(path, qa, "answers", list, where, [])
                if flag or (flag is None and not raw_answers and v2_file):
                    examples.append(QAExample(qid, question, context, [], True))
                    continue
                answers: list[tuple[str, int]] = []
                for n, answer in enumerate(raw_answers):
                    at = f"{where}.answers[{n}]"
                    answer_text = _get(path, answer, "text", str, at)
                    start = _get(path, answer, "answer_start", int, at)
                    # " Paris" is the same answer as "Paris": move the start past the spaces
                    start += len(answer_text) - len(answer_text.lstrip())
                    answer_text = answer_text.strip()
                    located, moved = _locate(context, answer_text, start) if answer_text \
                        else (None, False)
                    if located is None:
                        not_found += 1
                        continue
                    relocated += moved
                    answers.append((answer_text, located))
                if not answers:
                    dropped += 1
                    continue
                examples.append(QAExample(qid, question, context, answers, False))
    if not examples:
        raise FinetuneDataError.at(
            path, f"no usable questions ({not_found} answers not found in their context, "
                  f"{dropped} questions dropped); {_LAYOUT}")
    return SquadData(examples=examples,
                     version_2=v2_file or any(e.is_impossible for e in examples),
                     relocated=relocated, not_found=not_found, dropped_examples=dropped)
