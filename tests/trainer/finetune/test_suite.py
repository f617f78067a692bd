"""`python -m trainer.finetune --suite`: the registry of what to run for a language, a user's
suite file, --compare beside ours in one table (suite.json, suite.md), and that table in the
exported model card and in `pipeline report`'s downstream section."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.finetune_data import make_model_dir, write_classification_jsonl
from tests.helpers.hub_datasets import (
    CLASS_FEATURES,
    TAGGING_FEATURES,
    classification_splits,
    hub_folder,
    offline_hf,
    saved_folder,
    tagging_splits,
)
from trainer.finetune.__main__ import main
from trainer.finetune.readers import FinetuneDataError
from trainer.finetune.suite import language_entries, load_suite, registry


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    offline_hf(monkeypatch, tmp_path)


def test_a_language_gets_wikiann_its_own_tasks_and_xnli_where_it_is_in_it():
    hu = language_entries("hu")
    assert [(e["dataset"], e["config"], e["task"]) for e in hu] == [
        ("unimelb-nlp/wikiann", "hu", "ner"),
        ("universal-dependencies/universal_dependencies", "hu_szeged", "pos")]
    assert hu[1]["tag_column"] == "upos"
    de = language_entries("de")
    assert [e["name"] for e in de] == ["wikiann-de", "xnli-de"]
    assert de[1]["dataset"] == "facebook/xnli" and de[1]["config"] == "de"
    assert len(registry()["wikiann"]["languages"]) == 176
    with pytest.raises(FinetuneDataError, match="--suite qqq: no suite for this language.*--suite FILE"):
        language_entries("qqq")


def test_a_suite_file_is_checked(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tasks": [{"dataset": "x", "colour": "red"}]}))
    with pytest.raises(FinetuneDataError, match="unknown key\\(s\\) colour"):
        load_suite(str(bad))
    bad.write_text(json.dumps({"tasks": []}))
    with pytest.raises(FinetuneDataError, match="one task or more"):
        load_suite(str(bad))
    with pytest.raises(FinetuneDataError, match="no such file"):
        load_suite(str(tmp_path / "none.json"))


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    with pytest.MonkeyPatch.context() as mp:   # a private HF cache here too (module scope)
        offline_hf(mp, root)
        return _suite_dir(root)


def _suite_dir(root):
    make_model_dir(root)
    (root / "other").mkdir()
    make_model_dir(root / "other", seed=7)
    hub_folder(root / "ner", {"hu": tagging_splits((120, 30, 30))}, TAGGING_FEATURES)
    files = {s: write_classification_jsonl(root / f"{s}.jsonl", n, seed)
             for s, n, seed in (("train", 120, 1), ("validation", 40, 2))}
    saved_folder(root / "cls", classification_splits(files), CLASS_FEATURES)
    (root / "suite.json").write_text(json.dumps({"name": "toy", "tasks": [
        {"name": "toy-ner", "dataset": "ner", "config": "hu"},      # relative to the suite file
        {"dataset": str(root / "cls")}]}))
    return root


def test_a_missing_dataset_in_a_suite_or_an_uncached_compare_model_stop_before_anything(
        suite_dir, tmp_path, capsys):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"tasks": [{"dataset": str(suite_dir / "ner"), "config": "hu"},
                                           {"dataset": "someone/not-cached"}]}))
    out = tmp_path / "out"
    assert main(["--model", str(suite_dir / "hf"), "--suite", str(suite), "--output_dir", str(out)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Error")]
    assert len(err) == 1 and "--dataset someone/not-cached: not in the datasets cache" in err[0]
    assert not out.exists()
    assert main(["--model", str(suite_dir / "hf"), "--suite", str(suite_dir / "suite.json"),
                 "--compare", "someone/not-a-cached-model", "--output_dir", str(out)]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Error")]
    assert len(err) == 1 and "someone/not-a-cached-model: no such folder, not in the Hugging Face cache" in err[0]
    assert not out.exists()


@pytest.mark.slow
def test_a_suite_with_compare_writes_one_table_that_the_card_and_the_report_show(suite_dir, tmp_path,
                                                                                 capsys):
    out = tmp_path / "ft"
    ours, other = suite_dir / "hf", suite_dir / "other" / "hf"
    args = ["--model", ours, "--suite", suite_dir / "suite.json", "--output_dir", out, "--seeds", "1,2",
            "--baseline", "random-init", "--compare", other, "--epochs", "1", "--learning_rate", "2e-3",
            "--device", "cpu"]
    assert main(list(map(str, args))) == 0
    printed = capsys.readouterr().out
    table = json.loads((out / "suite.json").read_text())
    assert table["suite"] == "toy" and table["seeds"] == [1, 2]
    assert [m["label"] for m in table["models"]] == [str(ours), str(other)]
    rows = {(r["name"], r["model"], r["variant"]): r for r in table["rows"]}
    assert set(rows) == {(t, m, v) for t in ("toy-ner", "cls") for m, v in
                         ((str(ours), "pretrained"), (str(ours), "random_init"), (str(other), "pretrained"))}
    ner = rows[("toy-ner", str(ours), "pretrained")]
    assert (ner["task"], ner["metric"], ner["config"], ner["split"]) == ("ner", "entity_f1", "hu", "test")
    assert ner["seeds"] == [1, 2] and len(ner["scores"]) == 2
    assert rows[("cls", str(other), "pretrained")]["split"] == "validation"
    for r in table["rows"]:   # each cell is the results.json beside it
        res = json.loads((out / r["results"]).read_text())
        assert res[r["variant"]]["mean"] == r["mean"]
    md = (out / "suite.md").read_text()
    assert f"| task | dataset | metric | {ours} (ours) | random init | {other} | seeds |" in md
    assert md.count("\n| toy-ner |") == 1 and "| entity_f1 |" in md and "| 1,2 |" in md
    assert f"{ours} (ours)" in printed

    # the export's card: an Evaluation section from the suite
    from trainer.export import export

    export(suite_dir / "run", tmp_path / "exported", evaluation=out)
    card = (tmp_path / "exported" / "README.md").read_text()
    # the compared model by its folder's name, not this machine's path (issue 60)
    assert "## Evaluation" in card and "suite `toy`" in card and f"Compared with {Path(other).name}," in card
    assert str(other) not in card
    assert f"{ner['mean']:.3f} ± {ner['sd']:.3f}" in card
    assert card.index("## Evaluation") < card.index("## How to load it")

    # pipeline report --downstream OUTPUT_DIR: the suite's table
    from pipeline.report.downstream import downstream_section

    sec = downstream_section([], [out])
    html = "".join(sec.parts)
    assert "Suite toy" in html and "toy-ner" in html and "random init" in html
    assert f"{ner['mean']:.3f} ± {ner['sd']:.3f}" in html


@pytest.mark.slow
def test_compare_without_a_suite_compares_on_the_commands_own_dataset(suite_dir, tmp_path, capsys):
    out = tmp_path / "cmp"
    other = suite_dir / "other" / "hf"
    assert main(list(map(str, ["--model", suite_dir / "hf", "--dataset", suite_dir / "ner",
                               "--dataset_config", "hu", "--compare", other, "--output_dir", out,
                               "--epochs", "1", "--device", "cpu"]))) == 0
    table = json.loads((out / "suite.json").read_text())
    assert table["suite"] == "ner-hu"
    assert [(r["name"], r["model"], r["variant"]) for r in table["rows"]] == [
        ("ner-hu", str(suite_dir / "hf"), "pretrained"), ("ner-hu", str(other), "pretrained")]
    assert (out / "ner-hu" / "ours" / "results.json").is_file()
    assert json.loads((out / "ner-hu" / "ours" / "results.json").read_text())["dataset"]["config"] == "hu"
