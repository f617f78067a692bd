"""Datasets as the Hub lays them out (a README card with the features, Parquet under data/) and as
`save_to_disk` writes them, built from the fine-tuning fixtures (tests/helpers/finetune_data.py);
nothing is downloaded.

    offline_hf(monkeypatch, tmp_path)                       # a private HF cache, no network
    hub = hub_folder(root / "ner", {"hu": tagging_splits()}, TAGGING_FEATURES)
    saved = saved_folder(root / "saved", tagging_splits(), TAGGING_FEATURES)

The Parquet files hold plain values (tag ids as integers): the ClassLabel names are in the card
only, as on the Hub, so a test sees that they are read from there.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers.finetune_data import tagged_sentences

TAGS = ["O", "B-ENT", "I-ENT"]
TAGGING_FEATURES = [("tokens", {"sequence": "string"}),
                    ("ner_tags", {"sequence": {"class_label": {"names": TAGS}}})]


def offline_hf(monkeypatch, tmp_path: Path) -> None:
    """HF_HOME and the datasets cache under tmp_path, and no network for datasets or the Hub."""
    home = tmp_path / "hf_home"
    for name, value in (("HF_HOME", home), ("HF_DATASETS_CACHE", home / "datasets"),
                        ("HF_HUB_CACHE", home / "hub"), ("HF_DATASETS_OFFLINE", "1"),
                        ("HF_HUB_OFFLINE", "1")):
        monkeypatch.setenv(name, str(value))


def tagging_splits(sizes=(300, 60, 60)) -> dict[str, list[dict]]:
    """WikiANN-shaped rows (tokens, ner_tags as ids into TAGS) of the NER fixture, seeds 1-3."""
    out = {}
    for split, n, seed in zip(("train", "validation", "test"), sizes, (1, 2, 3)):
        out[split] = [{"tokens": [w for w, _ in s], "ner_tags": [TAGS.index(t) for _, t in s]}
                      for s in tagged_sentences(n, seed)]
    return out


def jsonl_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _yaml_feature(name: str, spec) -> list[str]:
    lines = [f"  - name: {name}"]
    if isinstance(spec, str):
        return lines + [f"    dtype: {spec}"]
    (key, value), = spec.items()
    if key == "class_label":
        return lines + ["    dtype:", "      class_label:", "        names:"] + [
            f"          '{i}': {n}" for i, n in enumerate(value["names"])]
    if isinstance(value, str):
        return lines + [f"    {key}: {value}"]
    names = value["class_label"]["names"]
    return lines + [f"    {key}:", "      class_label:", "        names:"] + [
        f"          '{i}': {n}" for i, n in enumerate(names)]


def hub_folder(root: Path, configs: dict[str, dict[str, list[dict]]], features) -> Path:
    """root/README.md (a card: each config's features and data files) and
    root/data/CONFIG/SPLIT-00000-of-00001.parquet."""
    card = ["---", "dataset_info:"]
    listing = ["configs:"]
    for config, splits in configs.items():
        card += [f"- config_name: {config}", "  features:"]
        for name, spec in features:
            card += _yaml_feature(name, spec)
        listing += [f"- config_name: {config}", "  data_files:"]
        for split, rows in splits.items():
            folder = root / "data" / config
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows), folder / f"{split}-00000-of-00001.parquet")
            listing += [f"  - split: {split}", f"    path: data/{config}/{split}-*"]
    text = "\n".join(card + listing + ["---", "", "A test dataset written by the tests.", ""])
    (root / "README.md").write_text(text, encoding="utf-8")
    return root


def saved_folder(root: Path, splits: dict[str, list[dict]], features=None) -> Path:
    """The same rows as a DatasetDict.save_to_disk folder (the features kept in it; None: as
    datasets infers them from the rows)."""
    import datasets

    feats = None if features is None else datasets.Features(
        {name: _feature(spec) for name, spec in features})
    datasets.DatasetDict({split: datasets.Dataset.from_list(rows, features=feats)
                          for split, rows in splits.items()}).save_to_disk(str(root))
    return root


def _feature(spec):
    import datasets

    if isinstance(spec, str):
        return datasets.Value(spec)
    (key, value), = spec.items()
    if key == "class_label":
        return datasets.ClassLabel(names=value["names"])
    inner = datasets.Value(value) if isinstance(value, str) else datasets.ClassLabel(
        names=value["class_label"]["names"])
    return datasets.Sequence(inner)


CLASS_FEATURES = [("sentence", "string"), ("label", {"class_label": {"names": ["neg", "pos"]}})]


def classification_splits(paths: dict[str, Path]) -> dict[str, list[dict]]:
    """The classification fixture's JSONL files as rows with ClassLabel ids (neg 0, pos 1)."""
    names = CLASS_FEATURES[1][1]["class_label"]["names"]
    return {split: [{"sentence": r["sentence"], "label": names.index(r["label"])}
                    for r in jsonl_rows(path)] for split, path in paths.items()}


def squad_splits(paths: dict[str, Path]) -> dict[str, list[dict]]:
    """SQuAD JSON files as the Hub's squad rows (id, title, context, question, answers)."""
    out = {}
    for split, path in paths.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        out[split] = [{"id": qa["id"], "title": article.get("title", ""), "context": p["context"],
                       "question": qa["question"],
                       "answers": {"text": [a["text"] for a in qa["answers"]],
                                   "answer_start": [a["answer_start"] for a in qa["answers"]]}}
                      for article in doc["data"] for p in article["paragraphs"] for qa in p["qas"]]
    return out
