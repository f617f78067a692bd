"""Adding a model family is one module (tests/helpers/toy_family.py) and one registry line: with
nothing else changed, the trainer trains it (MLM only, evaluation without NSP figures), resumes it
exactly, and export writes its files and a card that names it."""
from __future__ import annotations

import json

import pytest

from tests.helpers.trainer_cli import assert_same_run, base_args, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def toy_registered(monkeypatch):
    """The one registry line a new family needs."""
    from trainer import models

    monkeypatch.setitem(models.FAMILIES, "toy", ("tests.helpers.toy_family", "a tiny test encoder"))


def test_a_family_added_by_one_module_trains_resumes_and_exports(toy_registered, tiny_shards, tiny_vocab,
                                                                  tmp_path):
    cfg = tmp_path / "toy.json"
    cfg.write_text(json.dumps({"vocab_size": 200, "hidden_size": 16, "num_hidden_layers": 2,
                               "num_attention_heads": 2, "max_position_embeddings": 64}))
    kw = dict(model_type="toy", no_nsp=True, optimizer="adamw", learning_rate=1e-3, max_steps=6,
              checkpoint_every=3, eval_every=6)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(base_args(tiny_shards, cfg, straight, vocab=tiny_vocab, **kw)) == 0
    assert main(base_args(tiny_shards, cfg, parts, vocab=tiny_vocab, steps_this_run=3, **kw)) == 0
    assert main(base_args(tiny_shards, cfg, parts, vocab=tiny_vocab, resume_from_checkpoint=True, **kw)) == 0
    assert_same_run(straight, parts, 6)
    log = read_log(straight)
    ev = [r for r in log if "eval_loss" in r][-1]
    assert "eval_mlm_acc" in ev and "eval_nsp_acc" not in ev and log[0]["loss"] > log[5]["loss"]
    hp = json.loads((straight / "hparams.json").read_text())
    assert hp["model_type"] == "toy" and hp["objective"].startswith("toy, masked LM only")
    meta = json.loads((straight / "checkpoints" / "ckpt_00000006" / "meta.json").read_text())
    assert meta["model_type"] == "toy" and meta["model_config"]["hidden_size"] == 16

    from trainer.export import main as export_main

    hf = tmp_path / "hf"
    assert export_main(["--checkpoint_dir", str(straight), "--output", str(hf)]) == 0
    assert json.loads((hf / "config.json").read_text())["architectures"] == ["ToyForMaskedLM"]
    assert (hf / "model.safetensors").is_file() and (hf / "vocab.txt").is_file()
    card = (hf / "README.md").read_text()
    assert "# Toy for" in card and "ToyForMaskedLM.from_pretrained" in card


def test_an_unknown_model_type_names_the_families(tiny_shards, tiny_bert_config, tmp_path, capsys):
    assert main(base_args(tiny_shards, tiny_bert_config, tmp_path / "o", model_type="toy")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bert" in err[0] and "modernbert" in err[0], err
