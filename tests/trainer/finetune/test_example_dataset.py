"""The local dataset docs/finetuning.md shows (issue 60: its file names and card were nowhere):
the folder the page shows is docs/examples/ner_dataset/ file for file, and `python -m
trainer.finetune --dataset` reads exactly that folder (the task and tag names from its card) and
fine-tunes on it."""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from tests.helpers.finetune_data import make_model_dir
from tests.helpers.hub_datasets import offline_hf
from trainer.finetune.__main__ import main
from trainer.finetune.hf_datasets import dataset_task

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "ner_dataset"
PAGE = (ROOT / "docs" / "finetuning.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE, re.S)


def test_the_page_shows_the_folder_as_it_is():
    files = sorted(str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == ["README.md", "data/hu/test.jsonl", "data/hu/train.jsonl", "data/hu/validation.jsonl"]
    tree = PAGE.split("```\ndocs/examples/ner_dataset/\n", 1)[1].split("```", 1)[0]
    for name in ("README.md", "data/hu/", "train.jsonl", "validation.jsonl", "test.jsonl"):
        assert name in tree, name
    assert (EXAMPLE / "README.md").read_text(encoding="utf-8") in blocks("yaml")
    assert (EXAMPLE / "data" / "hu" / "train.jsonl").read_text(encoding="utf-8") in blocks("json")


def test_the_documented_folder_is_what_finetune_reads(monkeypatch, tmp_path):
    offline_hf(monkeypatch, tmp_path)
    args = argparse.Namespace(dataset=str(EXAMPLE), dataset_config="hu", task=None, tag_column=None,
                              text_column=None, text_pair_column=None, label_column=None,
                              train_split=None, validation_split=None, test_split=None)
    task = dataset_task(args)
    assert args.task == "ner" and task.name == "ner"
    assert args.dataset_info["splits"] == {"train": "train", "validation": "validation", "test": "test"}
    assert args.dataset_info["columns"]["tags"] == "ner_tags"


@pytest.mark.slow
def test_finetune_trains_on_the_documented_folder(monkeypatch, tmp_path, capsys):
    offline_hf(monkeypatch, tmp_path)
    make_model_dir(tmp_path / "model")
    code = main(["--model", str(tmp_path / "model" / "hf"), "--dataset", str(EXAMPLE), "--dataset_config", "hu",
                 "--output_dir", str(tmp_path / "out"), "--epochs", "1", "--device", "cpu"])
    assert code == 0, capsys.readouterr().err
    result = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert result["task"] == "ner" and result["dataset"]["name"] == str(EXAMPLE)
    assert result["data"]["examples"]["train"] == 4
