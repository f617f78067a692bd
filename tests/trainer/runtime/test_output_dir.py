"""The run's record is the run's (trainer/runtime/output_dir.py): hparams.json and model_config.json
are written at the first start only; a resume appends what it was started with, and what
changed, to resumes.jsonl; a resume that changes the model or the data order is one `Error:`
line, before anything is built."""
from __future__ import annotations

import json

import pytest

from tests.helpers.encode_testdata import write_vocab
from tests.helpers.trainer_cli import base_args
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")


def one_error(capsys, argv) -> str:
    assert main(argv) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("Error: "), err
    return err[0]


@pytest.fixture
def first(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    """A run's first start: 3 of its 6 steps."""
    out = tmp_path / "run"
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, max_steps=6, steps_this_run=3,
                          checkpoint_every=3)) == 0
    return out


def test_hparams_are_the_first_starts_and_each_resume_is_logged(first, tiny_shards, tiny_bert_config,
                                                                 tiny_vocab):
    hparams = (first / "hparams.json").read_bytes()
    model_config = (first / "model_config.json").read_bytes()
    assert json.loads(hparams)["steps_this_run"] == 3 and not (first / "resumes.jsonl").exists()
    assert main(base_args(tiny_shards, tiny_bert_config, first, tiny_vocab, max_steps=6, checkpoint_every=3,
                          log_every=2, resume_from_checkpoint=True)) == 0
    assert (first / "hparams.json").read_bytes() == hparams
    assert (first / "model_config.json").read_bytes() == model_config
    (resume,) = [json.loads(line) for line in (first / "resumes.jsonl").read_text().splitlines()]
    assert resume["step"] == 3 and resume["hparams"]["log_every"] == 2 and resume["started"]
    assert resume["changed"]["log_every"] == {"first": 1, "now": 2}
    assert resume["changed"]["steps_this_run"] == {"first": 3, "now": None}
    assert "model_config" not in resume["changed"] and "seed" not in resume["changed"]


def test_a_resume_that_changes_the_model_or_the_data_order_is_one_line(first, tiny_shards, tiny_bert_config,
                                                                       tiny_vocab, tmp_path, capsys):
    resume = dict(max_steps=6, checkpoint_every=3, resume_from_checkpoint=True)
    err = one_error(capsys, base_args(tiny_shards, tiny_bert_config, first, tiny_vocab, seed=4, **resume))
    assert "seed" in err and "3 at its first start" in err and "--seed" in err
    wider = tmp_path / "wider.json"
    wider.write_text(json.dumps({**json.loads(tiny_bert_config.read_text()), "intermediate_size": 128}))
    err = one_error(capsys, base_args(tiny_shards, wider, first, tiny_vocab, **resume))
    assert "model config" in err and "intermediate_size" in err and "--model_config" in err
    tokens = tiny_vocab.read_text(encoding="utf-8").splitlines()
    other = write_vocab(tmp_path / "other", tokens[:-1] + ["zzz"], lower_case=False)
    err = one_error(capsys, base_args(tiny_shards, tiny_bert_config, first, other, **resume))
    assert "tokenizer" in err and "--vocab_file" in err
    err = one_error(capsys, base_args(tiny_shards, tiny_bert_config, first, tiny_vocab, train_batch_size=4,
                                      **resume))
    assert "global batch" in err
    assert not (first / "resumes.jsonl").exists()


def test_the_old_name_of_the_model_config_is_taken(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    """--bert_config (and "bert_config" in a config file) is --model_config."""
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"bert_config": str(tiny_bert_config)}))
    argv = [a for a in base_args(tiny_shards, tiny_bert_config, tmp_path / "o", tiny_vocab, max_steps=1)
            if a not in ("--bert_config", str(tiny_bert_config))]
    assert main(["--config_file", str(cfg), *argv]) == 0
    hp = json.loads((tmp_path / "o" / "hparams.json").read_text())
    assert hp["model_config"] == str(tiny_bert_config) and "bert_config" not in hp
