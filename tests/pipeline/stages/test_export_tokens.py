"""`pipeline export --format tokens`: the rows of a packed encode unmasked (the HDF5's restored
ids, row for row), token for token the parquet articles' text through the tokenizer saved beside
them, a packed layout 2 file's `doc_starts` carried, pairs refused in one line; and transformers'
Trainer learns from them through `datasets` and DataCollatorForLanguageModeling."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.encoding.hdf5_format import masked_lm_labels
from pipeline.stages.export import export
from tests.helpers.export_corpus import SEQ, build_corpus

datasets = pytest.importorskip("datasets")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    data = tmp_path_factory.mktemp("data")
    encoded = build_corpus(data)
    export(data_dir=data, lang="hu", workers=1, format="tokens")
    export(data_dir=data, lang="hu", workers=1, format="parquet")
    return data, encoded


def restored_rows(path: Path) -> list[list[int]]:
    """The HDF5 rows with the masked ids put back, padding cut (the label rule by hand)."""
    with h5py.File(path, "r") as fh:
        ids = fh["input_ids"][:].copy()
        pos, mids, mask = fh["masked_lm_positions"][:], fh["masked_lm_ids"][:], fh["input_mask"][:]
    labels = masked_lm_labels(pos, mids)
    for r, c in zip(*np.nonzero(labels >= 0)):
        ids[r, pos[r, c]] = labels[r, c]
    return [row[: int(m.sum())].tolist() for row, m in zip(ids, mask)]


def stream_documents(rows: list[list[int]], cls: int, sep: int) -> list[tuple[int, ...]]:
    """The documents of packed rows: every [CLS] dropped (a row's own and, in layout 2, each
    document's), the stream cut after each [SEP]; a last document may have lost its [SEP]
    (layout 2 drops a shard's final [SEP] that would stand alone in a row)."""
    docs, cur = [], []
    for row in rows:
        assert row[0] == cls
        for t in row:
            if t == sep:
                docs.append(tuple(cur))
                cur = []
            elif t != cls:
                cur.append(t)
    if cur:
        docs.append(tuple(cur))
    return docs


def test_rows_are_the_hdf5_rows_unmasked(corpus):
    data, encoded = corpus
    out = data / "hu" / "export" / "tokens"
    ds = datasets.load_dataset("parquet", data_dir=str(out))
    assert ds["train"].column_names == ["input_ids", "attention_mask", "special_tokens_mask", "len",
                                        "doc_starts"]
    by_card = datasets.load_dataset(str(out))         # the card's one config, named after the corpus
    assert by_card["train"]["input_ids"] == ds["train"]["input_ids"]
    assert datasets.get_dataset_config_names(str(out))[0].startswith("huwiki-")
    tok = transformers.AutoTokenizer.from_pretrained(str(out / "tokenizer"))
    for name, split in (("train", "training"), ("test", "test")):
        files = sorted((encoded / "huwiki").glob(f"huwiki_{split}_*.hdf5"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        expected = [row for f in files for row in restored_rows(f)]
        rows = ds[name]
        assert rows["input_ids"] == expected
        assert rows["len"] == [len(r) for r in expected] and max(rows["len"]) == SEQ
        assert all(set(m) == {1} for m in rows["attention_mask"])
        specials = set(tok.all_special_ids)
        assert rows["special_tokens_mask"] == [[int(t in specials) for t in r] for r in expected]
        assert tok.mask_token_id not in {t for r in expected for t in r}   # unmasked
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "data/train-*.parquet" in card and "Dupe factor 1" in card


def test_tokens_are_the_articles_token_for_token(corpus):
    data, _ = corpus
    out = data / "hu" / "export"
    tok = transformers.AutoTokenizer.from_pretrained(str(out / "tokens" / "tokenizer"))
    rows = datasets.load_dataset("parquet", data_dir=str(out / "tokens"))
    articles = datasets.load_dataset("parquet", data_dir=str(out / "parquet"))
    for split in ("train", "test"):
        by_sentence, by_text = Counter(), Counter()
        for r in articles[split]:
            ids = [i for s in r["sentences"] for i in tok(s, add_special_tokens=False)["input_ids"]]
            by_sentence[tuple(ids)] += 1
            by_text[tuple(tok(r["text"], add_special_tokens=False)["input_ids"])] += 1
        from_rows = Counter(stream_documents(rows[split]["input_ids"], tok.cls_token_id, tok.sep_token_id))
        assert from_rows == by_sentence == by_text


def test_layout_2_carries_doc_starts(corpus):
    data, encoded = corpus
    ds = datasets.load_dataset("parquet", data_dir=str(data / "hu" / "export" / "tokens"))
    files = sorted((encoded / "huwiki").glob("huwiki_training_*.hdf5"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    expected = []
    for f in files:
        with h5py.File(f, "r") as fh:
            assert fh.attrs["packed"] == 2
            expected += [row[: int(m.sum())].tolist() for row, m in zip(fh["doc_starts"][:], fh["input_mask"][:])]
    assert ds["train"]["doc_starts"] == expected
    assert sum(map(sum, expected)) > len(expected)   # documents start inside rows too
    assert "doc_starts" in (data / "hu" / "export" / "tokens" / "README.md").read_text(encoding="utf-8")


def test_pairs_and_a_missing_encode_are_one_line(corpus, tmp_path):
    data, encoded = corpus
    pairs = tmp_path / "hdf5_pairs"
    shutil.copytree(encoded, pairs)
    manifest = json.loads((pairs / "manifest.json").read_text())
    manifest["options"].pop("pack")
    (pairs / "manifest.json").write_text(json.dumps(manifest))
    for f in (pairs / "huwiki").glob("*.hdf5"):
        with h5py.File(f, "a") as fh:
            del fh.attrs["packed"]
    with pytest.raises(StageError, match="sentence pairs.*encode --pack"):
        export(data_dir=data, lang="hu", format="tokens", input=pairs, output=tmp_path / "o")
    empty = tmp_path / "empty"
    shutil.copytree(data / "hu" / "vocab", empty / "hu" / "vocab")
    res = CliRunner().invoke(cli, ["--data-dir", str(empty), "--lang", "hu", "export", "--format", "tokens"])
    assert res.exit_code == 1 and "encode --pack" in res.output
    assert [line for line in res.output.splitlines() if line.startswith("Error:")] == res.output.strip().splitlines()


@pytest.mark.slow
def test_transformers_trainer_learns_from_the_rows(corpus, tmp_path):
    torch = pytest.importorskip("torch")
    data, _ = corpus
    out = data / "hu" / "export" / "tokens"
    tok = transformers.AutoTokenizer.from_pretrained(str(out / "tokenizer"))
    ds = datasets.load_dataset("parquet", data_dir=str(out))
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=SEQ, pad_token_id=tok.pad_token_id)
    model = transformers.BertForMaskedLM(config)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "run"), per_device_train_batch_size=16,
                                          max_steps=60, learning_rate=3e-3, logging_steps=10, report_to=[],
                                          save_strategy="no", use_cpu=True, seed=0, disable_tqdm=True)
    collator = transformers.DataCollatorForLanguageModeling(tok, mlm_probability=0.3)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=ds["train"], data_collator=collator)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) >= 5 and losses[-1] < losses[0] - 0.4, losses


def test_both_exports_name_their_config_with_the_dumps_date(corpus, tmp_path):
    """The config name carries the dump's date where its file name says it, for the token rows
    as for the articles (the token export looked for extract's manifest at a wrong path)."""
    data, encoded = corpus
    other = tmp_path / "data"
    shutil.copytree(data, other, ignore=shutil.ignore_patterns("export"))
    manifest = other / "hu" / "extracted" / "manifest.json"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    record["dump"] = "/dumps/huwiki-20230501-pages-articles.xml.bz2"
    manifest.write_text(json.dumps(record), encoding="utf-8")
    for fmt in ("tokens", "parquet"):
        export(data_dir=other, lang="hu", workers=1, format=fmt,
               input=other / "hu" / encoded.name if fmt == "tokens" else None)
        name = datasets.get_dataset_config_names(str(other / "hu" / "export" / fmt))[0]
        assert name.startswith("huwiki-20230501-"), (fmt, name)
