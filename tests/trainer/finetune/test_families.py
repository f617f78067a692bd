"""Every fine-tuning task on every family (issue 46): classify and qa on a ModernBERT crashed
with KeyError 'token_type_ids'. Each (task, family) pair trains a few steps on a tiny model of
that family, with its own kind of tokenizer, and scores; a model gets only the inputs its
forward names (no segment ids for ModernBERT or DistilBERT)."""
from __future__ import annotations

import json

import pytest

from tests.helpers.finetune_data import (
    tagged_sentences,
    write_classification_jsonl,
    write_conll,
    write_squad,
)
from tests.helpers.pretrained_models import save_model, tokenizer_folder
from trainer.finetune.__main__ import main

pytest.importorskip("transformers")
pytestmark = pytest.mark.usefixtures("one_thread")

FAMILIES = {"bert": "BertForMaskedLM", "modernbert": "ModernBertForMaskedLM",
            "roberta": "RobertaForMaskedLM", "xlm-roberta": "XLMRobertaForMaskedLM",
            "distilbert": "DistilBertForMaskedLM"}
KIND = {"BertForMaskedLM": "wordpiece", "ModernBertForMaskedLM": "bpe", "RobertaForMaskedLM": "bpe",
        "XLMRobertaForMaskedLM": "unigram", "DistilBertForMaskedLM": "wordpiece"}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    models = {family: save_model(root / family, cls, tokenizer_folder(root, KIND[cls]))
              for family, cls in FAMILIES.items()}
    tagging = tagged_sentences(40, 1)
    pos = [[(w, "PROPN" if t != "O" else "X") for w, t in s] for s in tagging]
    files = {
        "ner": write_conll(root / "ner.conll", tagging),
        "pos": write_conll(root / "pos.conll", pos, docstart=False),
        "classify": write_classification_jsonl(root / "cls.jsonl", 40, 1),
        "qa": write_squad(root / "qa.json", 24, 1),
    }
    return models, files


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", ["classify", "qa", "ner", "pos"])
def test_every_task_runs_on_every_family(made, task, family, tmp_path):
    models, files = made
    out = tmp_path / "out"
    args = ["--model", models[family], "--task", task, "--train_file", files[task],
            "--validation_file", files[task], "--output_dir", out, "--epochs", "1",
            "--batch_size", "8", "--max_seq_length", "32", "--device", "cpu",
            "--learning_rate", "1e-3"]
    args += {"pos": ["--data_format", "conll"], "classify": ["--text_column", "sentence"]}.get(task, [])
    assert main([str(a) for a in args]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["task"] == task and len(results["pretrained"]["scores"]) == 1


@pytest.mark.parametrize("family", ["roberta", "xlm-roberta"])
def test_rows_as_long_as_a_roberta_takes(made, family, tmp_path):
    """RoBERTa's positions start after the pad id: 40 position rows hold 38 pieces, not 40."""
    models, _ = made
    data = tmp_path / "long.jsonl"
    data.write_text("".join(json.dumps({"sentence": " ".join(["w1 w2 w3 w40"] * 30), "label": label}) + "\n"
                            for label in ("pos", "neg") * 8))
    out = tmp_path / "out"
    assert main([str(a) for a in ("--model", models[family], "--task", "classify", "--train_file", data,
                                  "--validation_file", data, "--output_dir", out, "--epochs", "1",
                                  "--device", "cpu", "--text_column", "sentence")]) == 0
    assert json.loads((out / "results.json").read_text())["max_seq_length"] == 38
