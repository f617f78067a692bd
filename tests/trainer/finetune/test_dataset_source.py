"""`python -m trainer.finetune --dataset`: datasets in the Hub's layout and save_to_disk folders,
built here from the fine-tuning fixtures, feed the four tasks with the same scores as the file
readers; their columns are found from the features; bad input is one line and leaves nothing."""
from __future__ import annotations

import argparse
import json

import datasets
import pytest

from tests.helpers.finetune_data import (
    make_model_dir,
    tagged_sentences,
    write_classification_jsonl,
    write_conll,
    write_squad,
)
from tests.helpers.hub_datasets import (
    CLASS_FEATURES,
    TAGGING_FEATURES,
    classification_splits,
    hub_folder,
    offline_hf,
    saved_folder,
    squad_splits,
    tagging_splits,
)
from trainer.finetune.__main__ import main
from trainer.finetune.columns import find_columns
from trainer.finetune.hf_datasets import dataset_task
from trainer.finetune.readers import FinetuneDataError


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    offline_hf(monkeypatch, tmp_path)


def options(**given) -> argparse.Namespace:
    keys = ("task", "tag_column", "text_column", "text_pair_column", "label_column", "dataset",
            "dataset_config", "train_split", "validation_split", "test_split")
    return argparse.Namespace(**{k: given.get(k) for k in keys})


def features(**cols) -> datasets.Features:
    return datasets.Features(cols)


S, CL = datasets.Value("string"), datasets.ClassLabel


def test_columns_are_found_from_the_features():
    wikiann = features(tokens=datasets.Sequence(S), ner_tags=datasets.Sequence(CL(names=["O", "B-PER", "I-PER"])),
                       langs=datasets.Sequence(S), spans=datasets.Sequence(S))
    plan = find_columns(wikiann, options(), "w")
    assert (plan.task, plan.tokens, plan.tags, plan.tag_names) == ("ner", "tokens", "ner_tags",
                                                                    ["O", "B-PER", "I-PER"])
    ud = features(idx=S, text=S, tokens=datasets.Sequence(S), lemmas=datasets.Sequence(S),
                  upos=datasets.Sequence(CL(names=["NOUN", "VERB", "PUNCT"])), xpos=datasets.Sequence(S))
    plan = find_columns(ud, options(), "ud")
    assert (plan.task, plan.tags) == ("pos", "upos")
    plan = find_columns(ud, options(tag_column="xpos"), "ud")       # strings as tags
    assert (plan.task, plan.tags, plan.tag_names) == ("pos", "xpos", None)
    xnli = features(premise=S, hypothesis=S, label=CL(names=["entailment", "neutral", "contradiction"]))
    plan = find_columns(xnli, options(), "x")
    assert (plan.task, plan.text, plan.text_pair, plan.label) == ("classify", "premise", "hypothesis", "label")
    squad = features(id=S, title=S, context=S, question=S,
                     answers=datasets.Sequence({"text": S, "answer_start": datasets.Value("int32")}))
    assert find_columns(squad, options(), "s").task == "qa"


def test_columns_that_fit_no_task_say_what_was_found_and_the_flags():
    odd = features(a=datasets.Value("int64"), b=datasets.Value("float32"))
    with pytest.raises(FinetuneDataError, match=r"a \(int64\), b \(float32\) fit no task.*--tag_column"):
        find_columns(odd, options(), "--dataset odd")
    numbers = features(tokens=datasets.Sequence(S), tags=datasets.Sequence(datasets.Value("int64")))
    with pytest.raises(FinetuneDataError, match="tags is list of int64, not a ClassLabel.*--tag_column"):
        find_columns(numbers, options(task="ner"), "--dataset n")
    with pytest.raises(FinetuneDataError, match="--text_column nope: no such column"):
        find_columns(numbers, options(text_column="nope"), "--dataset n")


def test_a_hub_folder_with_configs_and_a_saved_folder_give_the_file_readers_rows(tmp_path):
    splits = tagging_splits((30, 10, 10))
    hub = hub_folder(tmp_path / "hub", {"hu": splits, "de": tagging_splits((5, 5, 5))}, TAGGING_FEATURES)
    saved = saved_folder(tmp_path / "saved", splits, TAGGING_FEATURES)
    conll = write_conll(tmp_path / "train.conll", tagged_sentences(30, 1))
    from trainer.finetune.readers import read_tagging

    from_file = read_tagging(conll)
    for name, config in ((hub, "hu"), (saved, None)):
        args = options(dataset=str(name), dataset_config=config)
        task = dataset_task(args)
        assert task.name == "ner" and args.task == "ner"
        assert [(s.words, s.tags) for s in task.splits["train"]] == [(s.words, s.tags) for s in from_file]
        assert set(task.splits) == {"train", "validation", "test"}
    de = dataset_task(options(dataset=str(hub), dataset_config="de"))
    assert de.size("train") == 5


def test_a_missing_split_names_the_splits_and_the_flag(tmp_path):
    splits = tagging_splits((10, 5, 5))
    saved = saved_folder(tmp_path / "saved", {"train": splits["train"], "dev": splits["validation"]},
                         TAGGING_FEATURES)
    with pytest.raises(FinetuneDataError, match="no split 'validation' \\(splits: train, dev\\); .*"
                                                "--validation_split"):
        dataset_task(options(dataset=str(saved)))
    task = dataset_task(options(dataset=str(saved), validation_split="dev"))
    assert set(task.splits) == {"train", "validation"}
    with pytest.raises(FinetuneDataError, match="no split 'heldout'.*--test_split"):
        dataset_task(options(dataset=str(saved), validation_split="dev", test_split="heldout"))


def run_main(capsys, *args) -> tuple[int, str]:
    code = main(list(map(str, args)))
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    root = tmp_path_factory.mktemp("model")
    make_model_dir(root)
    return root / "hf"


def test_offline_with_an_uncached_hub_name_is_one_line_saying_how_to_use_a_local_copy(
        model, tmp_path, capsys):
    out = tmp_path / "out"
    code, err = run_main(capsys, "--model", model, "--dataset", "unimelb-nlp/wikiann",
                         "--dataset_config", "hu", "--output_dir", out)
    assert code == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: --dataset unimelb-nlp/wikiann "
                                                    "--dataset_config hu: not in the datasets cache")
    assert "HF_DATASETS_OFFLINE" in lines[0] and "--dataset DIR" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("case", ["no_task", "not_classlabel", "missing_split"])
def test_bad_input_is_one_error_line_and_nothing_in_the_output_dir(model, tmp_path, capsys, case):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "ds"
    (folder / "data").mkdir(parents=True)
    rows = {"no_task": [{"a": 1, "b": 2.0}],
            "not_classlabel": [{"tokens": ["w1", "w2"], "tags": [0, 1]}],
            "missing_split": [{"tokens": ["w1", "w2"], "ner_tags": [0, 1]}]}[case]
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "train-00000-of-00001.parquet")
    if case != "missing_split":
        pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "validation-00000-of-00001.parquet")
    out = tmp_path / "out"
    extra = ["--task", "ner"] if case == "not_classlabel" else []
    code, err = run_main(capsys, "--model", model, "--dataset", folder, "--output_dir", out, *extra)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1 and lines[0].startswith("Error: --dataset"), err
    expected = {"no_task": ("a (int64), b (float64) fit no task", "--text_column"),
                "not_classlabel": ("tags is list of int64, not a ClassLabel", "--tag_column"),
                "missing_split": ("no split 'validation' (splits: train)", "--validation_split")}[case]
    for text in expected:
        assert text in lines[0]
    assert not out.exists()


def file_args(kind: str, root):
    """(the file options, the dataset folder) of one fixture task, the same rows both ways."""
    if kind == "ner":
        files = {s: write_conll(root / f"{s}.conll", tagged_sentences(n, seed))
                 for s, n, seed in (("train", 120, 1), ("validation", 30, 2), ("test", 30, 3))}
        folder = hub_folder(root / "hub", {"default": tagging_splits((120, 30, 30))}, TAGGING_FEATURES)
        return ["--task", "ner"], files, folder
    if kind == "classify":
        files = {s: write_classification_jsonl(root / f"{s}.jsonl", n, seed)
                 for s, n, seed in (("train", 120, 1), ("validation", 40, 2))}
        folder = saved_folder(root / "saved", classification_splits(files), CLASS_FEATURES)
        return ["--task", "classify", "--text_column", "sentence"], files, folder
    files = {s: write_squad(root / f"{s}.json", n, seed)
             for s, n, seed in (("train", 80, 1), ("validation", 30, 2))}
    folder = saved_folder(root / "squad", squad_splits(files))
    return ["--task", "qa", "--max_seq_length", "64", "--doc_stride", "32"], files, folder


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ner", "classify", "qa"])
def test_the_same_rows_through_dataset_and_through_files_give_the_same_scores(model, tmp_path, capsys,
                                                                              kind):
    flags, files, folder = file_args(kind, tmp_path)
    common = ["--model", model, "--epochs", "1", "--seeds", "3", "--learning_rate", "2e-3",
              "--device", "cpu", "--batch_size", "16"]
    by_file = common + flags + [f"--{s}_file={p}" for s, p in files.items()] + [
        "--output_dir", tmp_path / "files"]
    by_dataset = common + flags + ["--dataset", folder, "--output_dir", tmp_path / "dataset"]
    assert main(list(map(str, by_file))) == 0
    assert main(list(map(str, by_dataset))) == 0
    a = json.loads((tmp_path / "files" / "results.json").read_text())
    b = json.loads((tmp_path / "dataset" / "results.json").read_text())
    assert a["task"] == b["task"] == kind and a["metric"] == b["metric"]
    assert a["data"]["examples"] == b["data"]["examples"]
    assert a["pretrained"]["all"][0]["test"] == b["pretrained"]["all"][0]["test"]
    assert a["pretrained"]["scores"] == b["pretrained"]["scores"]
    assert b["dataset"]["name"] == str(folder) and b["dataset"]["columns"]["task"] == kind


def test_a_test_split_with_hidden_labels_is_left_out_unless_named(tmp_path):
    """GLUE-style: every test label is -1 (ClassLabel's 'no label'). A test split taken by its
    name is left out with a warning; one named with --test_split is still an error."""
    rows = [{"sentence": f"w{i} w{i + 1}", "label": i % 2} for i in range(20)]
    hidden = [{"sentence": f"w{i}", "label": -1} for i in range(5)]
    folder = saved_folder(tmp_path / "glue", {"train": rows, "validation": rows[:6], "test": hidden},
                          CLASS_FEATURES)
    task = dataset_task(options(dataset=str(folder), text_column="sentence"))
    assert set(task.splits) == {"train", "validation"}
    with pytest.raises(FinetuneDataError, match="no labelled rows"):
        dataset_task(options(dataset=str(folder), text_column="sentence", test_split="test"))
