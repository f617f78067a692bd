"""The README.md model card export writes: facts from the run and the pipeline's manifests,
"unknown" where a fact is missing, how to load it, and Wikipedia's CC BY-SA attribution."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.synthetic_shards import write_vocab
from trainer.export.card import model_card
from trainer.models import get_family
from trainer.models.bert_network import BertConfig
from vocab.kinds import load_vocab


def write(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")


def test_the_card_holds_the_runs_and_the_corpus_facts(tmp_path):
    hdf5 = tmp_path / "data" / "uk" / "hdf5_lower_case_0_seq_len_128_max_pred_20_x"
    (hdf5 / "ukwiki").mkdir(parents=True)
    write(hdf5 / "manifest.json", {"summary": {"documents": 355, "tokens": 610373,
                                               "training_instances": 27552}})
    write(tmp_path / "data" / "uk" / "download" / "manifest.json",
          {"summary": {"dump": "/dumps/ukwiki-20230501-pages-articles.xml.bz2", "date": "latest"}})
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000400"
    write(run / "hparams.json", {"input_dir": str(hdf5), "max_steps": 400, "phase": 1,
                                 "seq_len": 128, "global_batch_size": 64, "world_size": 2,
                                 "precision": "bf16"})
    write(run / "train_log.jsonl", "".join(json.dumps(r) + "\n" for r in [
        {"step": 400, "loss": 6.5, "mlm_loss": 5.8, "nsp_loss": 0.7},
        {"step": 400, "eval_loss": 6.6, "eval_mlm_loss": 5.9, "eval_mlm_acc": 0.2,
         "eval_nsp_loss": 0.7, "eval_nsp_acc": 0.6, "eval_instances": 3602}]))
    write(ckpt / "meta.json", {"step": 400, "phase": 1})
    write_vocab(tmp_path / "vocab", 200)
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64)
    card = model_card(run, ckpt, config, load_vocab(tmp_path / "vocab"), n_params=123456,
                      family=get_family("bert"))
    assert card.startswith("---\nlanguage:\n- uk\n") and "pipeline_tag: fill-mask" in card
    for fact in ("ukwiki-20230501-pages-articles.xml.bz2 (date 20230501)", "355 documents",
                 "610,373 tokens", "27,552 training instances", "200 WordPiece tokens, cased",
                 "123,456 parameters", "400 steps of 400", "bf16", "loss 6.5000 (MLM 5.8000",
                 "on 3,602 held-out instances", "BertForPreTraining.from_pretrained",
                 "https://uk.wikipedia.org", "creativecommons.org/licenses/by-sa/4.0"):
        assert fact in card, fact


def test_missing_facts_are_unknown_not_guessed(tmp_path):
    write_vocab(tmp_path / "vocab", 200)
    ckpt = tmp_path / "ckpt_00000010"
    write(ckpt / "meta.json", {"step": 10, "phase": 1})
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64)
    card = model_card(None, ckpt, config, load_vocab(tmp_path / "vocab"), n_params=1, family=get_family("bert"))
    assert "language:" not in card and "BERT for `unknown`" in card
    assert "unknown (no train_log.jsonl)" in card and "https://www.wikipedia.org" in card
