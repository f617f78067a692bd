"""Adding a tokenizer kind is one module (tests/helpers/toy_kind.py) and one registry line: with
nothing else changed, the registry loads its folder, `pipeline encode --tokenizer` writes HDF5
that passes the contract (its ids, its fingerprint recorded), the vocab report measures it, the
trainer trains on that data with dynamic whole-word masks, and export writes its files."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from pipeline.encoding.hdf5_format import check_file, file_tokenizer_fingerprint
from pipeline.stages.encode import encode
from tests.helpers.encode_testdata import documents_text, make_documents, write_shards
from tests.helpers.toy_kind import ToyKind, write_toy_tokenizer
from tests.helpers.trainer_cli import base_args, read_log
from vocab import kinds
from vocab.reports.quality import evaluate_vocab


@pytest.fixture
def toy_registered(monkeypatch):
    """The one registry line a new kind needs."""
    monkeypatch.setitem(kinds.KINDS, "toy", ToyKind)


@pytest.fixture
def docs():
    return make_documents(40, seed=4)


def test_a_kind_added_by_one_module_encodes_reports_trains_and_exports(toy_registered, docs, tmp_path):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    toy = write_toy_tokenizer(tmp_path / "toy", documents_text(docs))
    spec = kinds.load_tokenizer(toy)
    assert isinstance(spec, ToyKind) and spec.kind == "toy"

    data = tmp_path / "data"
    write_shards(data / "xx" / "sharded", docs)
    summary = encode(data_dir=data, lang="xx", workers=1, tokenizer=toy, max_seq=32, max_pred=5,
                     dupe_factor=1, pack=True)
    files = sorted((data / "xx").glob("hdf5_*_tok-toy-*/xxwiki/*.hdf5"))
    assert files and summary["instances"] > 0
    for f in files:
        check_file(f)
        assert file_tokenizer_fingerprint(f) == spec.fingerprint
    with h5py.File(files[0]) as f:
        ids = f["input_ids"][:]
    assert ids[0, 0] == spec.cls_id and np.isin(ids, np.arange(spec.size)).all()

    rep = evaluate_vocab(toy, [" ".join(d) for d in docs[:5]])
    assert rep["vocab_size"] == spec.size and rep["subwords_per_word"] > 1

    from trainer.export import main as export_main
    from trainer.run_pretraining import main

    cfg = tmp_path / "model.json"
    cfg.write_text(json.dumps({"vocab_size": spec.size, "hidden_size": 16, "num_hidden_layers": 1,
                               "num_attention_heads": 2, "intermediate_size": 32,
                               "max_position_embeddings": 32, "type_vocab_size": 2}))
    hdf5 = files[0].parent.parent
    run = tmp_path / "run"
    assert main(base_args(hdf5, cfg, run, vocab=toy, no_nsp=True, masking="dynamic", whole_word_masking=True,
                          optimizer="adamw", learning_rate=1e-3, max_steps=3, checkpoint_every=3)) == 0
    assert len(read_log(run)) == 3 and (run / "chars.txt").is_file()
    assert export_main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "hf")]) == 0
    assert (tmp_path / "hf" / "chars.txt").is_file() and (tmp_path / "hf" / "model.safetensors").is_file()
