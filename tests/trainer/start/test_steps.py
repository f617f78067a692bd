"""The trainer's start as named steps (trainer/start/steps.py): the config resolved once after the
data is read, and kept by the run."""
import json

from tests.helpers.trainer_cli import base_args
from tests.trainer.conftest import SEQ_LEN
from trainer.config import load_config
from trainer.loop import Trainer
from trainer.models import get_family
from trainer.start import steps as startup


def test_the_data_decides_the_config_once(tiny_shards, tiny_bert_config, tmp_path):
    config = load_config(base_args(tiny_shards, tiny_bert_config, tmp_path / "o", tokens_per_step=16 * SEQ_LEN))
    family = get_family(config.model_type)
    inputs = startup.check(config, family)
    resolved, phases, notes = startup.resolve(config, family, inputs)
    assert config.doc_attention is None and resolved.doc_attention is None   # rows of sentence pairs
    # --tokens_per_step: 16 rows a step, 8 a micro-batch (--train_batch_size caps it)
    assert (resolved.train_batch_size, resolved.gradient_accumulation_steps) == (8, 2)
    assert (phases[0].train_batch_size, phases[0].gradient_accumulation_steps) == (8, 2)
    assert any("micro-batch 8 rows x 2 accumulation" in n for n in notes)
    # everything else as the flags resolved it
    assert resolved.replace(train_batch_size=8, gradient_accumulation_steps=1, eval_batch_size=8) == config


def test_the_run_keeps_the_resolved_config_and_the_plan_its_steps(tiny_shards, tiny_bert_config, tmp_path):
    out = tmp_path / "run"
    trainer = Trainer(load_config(base_args(tiny_shards, tiny_bert_config, out, max_steps=2)))
    try:
        before = trainer.config
        trainer.train()
        assert trainer.config is before and trainer.plan.max_steps == before.max_steps == 2
        assert json.loads((out / "hparams.json").read_text())["max_steps"] == 2
    finally:
        trainer.env.shutdown()
