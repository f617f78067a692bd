"""Text-classification files: CSV, TSV and JSONL, one example per row.

    examples = read_classification("train.csv")                        # columns text, label
    examples = read_classification("mnli.tsv", text_column="premise",
                                   text_pair_column="hypothesis", label_column="gold")
    examples = read_classification("data.jsonl")                       # {"text": .., "label": 1}
    example.text, example.text_pair, example.label, example.line      # label always a str

CSV is read with the csv module (quoted cells may hold commas, quotes and newlines); TSV is
split on tabs with quotes taken literally, as GLUE's TSV files need (their sentences hold
unbalanced quotes). Import these from `trainer.finetune.readers`, which re-exports them.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.numbers import plural
from trainer.finetune.textfiles import FinetuneDataError, PathLike, read_text, text_lines

_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".json": "jsonl",
            ".ndjson": "jsonl"}
# csv's default cell limit (128 KiB) is below some long documents (reviews, articles)
_CELL_LIMIT = 2**31 - 1


@dataclass
class TextExample:
    text: str
    text_pair: str | None
    label: str
    line: int          # 1-based line (CSV/TSV: the physical line of the row start; JSONL: the line)


def _table_rows(path: PathLike, text: str, delimiter: str) -> list[tuple[int, int, list[str]]]:
    """(first line, last line, cells) of each non-empty row (a quoted cell may span lines).
    Read at once, so that csv's process-wide cell limit is raised only during the read."""
    quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    rows = []
    old_limit = csv.field_size_limit(_CELL_LIMIT)
    try:
        end = 0
        while True:
            start = end + 1
            try:
                row = next(reader)
            except StopIteration:
                return rows
            except csv.Error as e:
                raise FinetuneDataError.at(path, f"not valid CSV ({e}); check the quoting of "
                                                 "the row starting here", start) from None
            end = reader.line_num
            if row and any(cell.strip() for cell in row):
                rows.append((start, end, row))
    finally:
        csv.field_size_limit(old_limit)


def _missing_column(path: PathLike, name: str, flag: str, columns: list[str],
                    line: int | None = None) -> FinetuneDataError:
    return FinetuneDataError.at(
        path, f"no column {name!r} (columns: {', '.join(columns)}); pass --{flag}", line)


def _read_table(path: PathLike, text: str, delimiter: str,
                wanted: list[tuple[str, str]]) -> Iterator[tuple[int, dict[str, str]]]:
    rows = _table_rows(path, text, delimiter)
    if not rows:
        raise FinetuneDataError.at(path, "empty file; a table needs a header row (e.g. "
                                         "text,label) and one row per example")
    header_line, _, header = rows[0]
    header = [h.strip() for h in header]
    for name, flag in wanted:
        if name not in header:
            raise _missing_column(path, name, flag, header)
    index = {name: header.index(name) for name, _ in wanted}
    for line, last, row in rows[1:]:
        if len(row) != len(header):
            hint = ("quote cells that hold commas" if delimiter == "," else
                    "cells must not hold tabs")
            if last > line:
                # a quote left open swallows the lines after it into one cell
                hint = f"the row runs to line {last}: is a quote on line {line} not closed?"
            raise FinetuneDataError.at(
                path, f"{plural(len(row), 'cell')} where the header (line {header_line}) has "
                      f"{plural(len(header), 'column')}; {hint}", line)
        yield line, {name: row[i] for name, i in index.items()}


def _json_cell(path: PathLike, line: int, name: str, value: Any, is_label: bool) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    # labels may be written as numbers or booleans (HF datasets' ClassLabel ints)
    if is_label and isinstance(value, (bool, int, float)):
        return json.dumps(value)
    raise FinetuneDataError.at(path, f"{name!r} is {json.dumps(value)[:40]}, not a "
                                     f"{'label' if is_label else 'string'}; fix the value", line)


def _json_array_of_objects(text: str) -> bool:
    """A whole-file JSON array of records (pandas' to_json default), not JSONL."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(doc, list) and bool(doc) and all(isinstance(x, dict) for x in doc)


def _read_jsonl(path: PathLike, text: str,
                wanted: list[tuple[str, str]]) -> Iterator[tuple[int, dict[str, Any]]]:
    if text.lstrip().startswith("[") and _json_array_of_objects(text):
        raise FinetuneDataError.at(path, "a JSON array; write one JSON object per line "
                                         "(JSONL), e.g. {\"text\": \"...\", \"label\": 1}")
    for number, raw in enumerate(text_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as e:
            raise FinetuneDataError.at(path, f"not valid JSON ({e.msg}, column {e.colno}); one "
                                             "JSON object per line", number) from None
        if not isinstance(record, dict):
            raise FinetuneDataError.at(path, "not a JSON object; one object per line, e.g. "
                                             "{\"text\": \"...\", \"label\": 1}", number)
        for name, flag in wanted:
            if name not in record:
                raise _missing_column(path, name, flag, list(record), number)
        yield number, record


def read_classification(path: PathLike, text_column: str = "text",
                        text_pair_column: str | None = None, label_column: str = "label",
                        fmt: str | None = None) -> list[TextExample]:
    """Examples from a CSV (.csv), TSV (.tsv/.tab) or JSONL (.jsonl/.json/.ndjson) file, or the
    format named by `fmt` (csv, tsv, jsonl). An empty text, text pair or label is an error
    with its line: silently training on blanks hides a broken export."""
    suffix = Path(path).suffix.lower()
    kind = (fmt or _FORMATS.get(suffix, "")).lower()
    kind = "jsonl" if kind == "json" else kind
    if kind not in ("csv", "tsv", "jsonl"):
        raise FinetuneDataError.at(
            path, f"unknown format {fmt!r}; use csv, tsv or jsonl" if fmt else
            f"cannot tell the format from the suffix {suffix!r}; name the file .csv, .tsv or "
            ".jsonl, or give the format (csv, tsv, jsonl)")
    wanted = [(text_column, "text_column"), (label_column, "label_column")]
    if text_pair_column is not None:
        wanted.append((text_pair_column, "text_pair_column"))
    text = read_text(path)
    rows: Iterator[tuple[int, dict[str, Any]]]
    if kind == "jsonl":
        rows = _read_jsonl(path, text, wanted)
    else:
        rows = _read_table(path, text, "," if kind == "csv" else "\t", wanted)
    examples = []
    for line, record in rows:
        cells = {}
        for name, _ in wanted:
            value = _json_cell(path, line, name, record[name], name == label_column)
            if not value.strip():
                raise FinetuneDataError.at(path, f"empty {name!r}; fill it in or remove the "
                                                 "row", line)
            cells[name] = value
        examples.append(TextExample(
            text=cells[text_column],
            text_pair=cells[text_pair_column] if text_pair_column is not None else None,
            label=cells[label_column].strip(), line=line))
    if not examples:
        raise FinetuneDataError.at(path, "no examples; the file has no rows after the header"
                                         if kind != "jsonl" else "no examples; one JSON object "
                                         "per line, e.g. {\"text\": \"...\", \"label\": 1}")
    return examples
