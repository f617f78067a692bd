"""The trainer with dynamic / whole-word masking and MLM-only training (--masking, --no_nsp):
a resumed run gives the uninterrupted losses (one process and two gloo ranks under torchrun),
the NSP head stays as initialised and the export still loads, bad settings are one line."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from tests.helpers.trainer_cli import ROOT, SCRIPT, assert_same_run, base_args, env, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
DYNAMIC = dict(masking="dynamic", whole_word_masking=True, mlm_probability=0.17)


def test_a_resumed_dynamic_mlm_only_run_gives_the_uninterrupted_losses(tiny_shards, tiny_bert_config,
                                                                       tiny_vocab, tmp_path, caplog):
    kw = dict(gradient_accumulation_steps=2, eval_every=3, max_steps=8, checkpoint_every=3,
              no_nsp=True, **DYNAMIC)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    caplog.set_level("INFO", logger="trainer")
    assert main(base_args(tiny_shards, tiny_bert_config, straight, vocab=tiny_vocab, **kw)) == 0
    assert any("objective: masked LM only (--no_nsp); dynamic masks, 0.17 of the tokens, whole words"
               in r.getMessage() for r in caplog.records)
    assert main(base_args(tiny_shards, tiny_bert_config, parts, vocab=tiny_vocab, steps_this_run=4,
                          **kw)) == 0
    (parts / "checkpoints" / "ckpt_00000004").rename(parts / "checkpoints" / ".tmp_ckpt_00000004")
    assert main(base_args(tiny_shards, tiny_bert_config, parts, vocab=tiny_vocab,
                          resume_from_checkpoint=True, **kw)) == 0
    assert_same_run(straight, parts, 8)
    log = read_log(straight)
    assert all("nsp_loss" not in r and "eval_nsp_loss" not in r for r in log)
    assert any("eval_mlm_acc" in r for r in log)
    # the NSP head and the pooler are as initialised (same seed: the same initial weights)
    from trainer.models.bert_network import BertConfig, BertForPreTraining

    torch.manual_seed(3)
    init = BertForPreTraining(BertConfig.from_json_file(tiny_bert_config)).state_dict()
    final = torch.load(straight / "checkpoints" / "ckpt_00000008" / "model.pt", weights_only=True)
    for key in ("cls.seq_relationship.weight", "bert.pooler.dense.weight"):
        assert torch.equal(init[key], final[key]), key
    assert not torch.equal(init["bert.encoder.layer.0.output.dense.weight"],
                           final["bert.encoder.layer.0.output.dense.weight"])
    # the export loads in Hugging Face and its card says what was trained
    transformers = pytest.importorskip("transformers")
    from trainer.export import main as export_main

    assert export_main(["--checkpoint_dir", str(straight), "--output", str(tmp_path / "hf")]) == 0
    _, info = transformers.BertForPreTraining.from_pretrained(tmp_path / "hf", output_loading_info=True)
    assert all(not v for v in info.values()), info
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert "masked language model only" in card and "dynamic masks" in card


def test_dynamic_masking_changes_training_and_static_stays_the_default(tiny_shards, tiny_bert_config,
                                                                       tiny_vocab, tmp_path):
    static, dynamic = tmp_path / "static", tmp_path / "dynamic"
    assert main(base_args(tiny_shards, tiny_bert_config, static, vocab=tiny_vocab, max_steps=3)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, dynamic, vocab=tiny_vocab, max_steps=3,
                          masking="dynamic")) == 0
    a, b = read_log(static), read_log(dynamic)
    assert a[0]["nsp_loss"] == pytest.approx(b[0]["nsp_loss"], abs=1e-3)   # same rows, weights
    assert a[0]["mlm_loss"] != pytest.approx(b[0]["mlm_loss"], abs=1e-4)   # other masks
    assert json.loads((static / "hparams.json").read_text())["masking"] == "static"


@pytest.mark.parametrize("extra, message", [
    (dict(mlm_probability=0.3), "--mlm_probability applies to --masking dynamic"),
    (dict(masking="dynamic", mlm_probability=0.5), "masks about 14 of 29 tokens but the HDF5 rows "
                                                   "hold at most 5 predictions"),
    (dict(masking="dynamic", mask_replace_prob=0.95, random_replace_prob=0.1), "is more than 1"),
])
def test_bad_masking_settings_are_one_line(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path,
                                           capsys, extra, message):
    assert main(base_args(tiny_shards, tiny_bert_config, tmp_path / "o", vocab=tiny_vocab, **extra)) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error: ") and message in err[0], err


def test_dynamic_masking_without_a_vocab_says_to_pass_one(tiny_shards, tiny_bert_config, tmp_path,
                                                          capsys):
    assert main(base_args(tiny_shards, tiny_bert_config, tmp_path / "o", masking="dynamic")) != 0
    assert "--masking dynamic needs the vocab" in capsys.readouterr().err


@pytest.mark.slow
def test_two_gloo_ranks_with_dynamic_masks_resume_exactly(tiny_shards, tiny_bert_config, tiny_vocab,
                                                          tmp_path):
    """Under torchrun with 2 ranks: a dynamic whole-word MLM-only run killed after step 6 (its
    checkpoint half-written) resumes from step 4 and gives the uninterrupted losses."""
    kw = dict(max_steps=10, log_every=2, checkpoint_every=4, gradient_accumulation_steps=2,
              eval_every=5, no_nsp=True, **DYNAMIC)

    def torchrun(out, **extra):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               str(SCRIPT), *base_args(tiny_shards, tiny_bert_config, out, vocab=tiny_vocab, **kw, **extra)]
        res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert res.returncode == 0, res.stderr[-3000:]

    straight, parts = tmp_path / "straight", tmp_path / "parts"
    torchrun(straight)
    torchrun(parts, steps_this_run=6)
    (parts / "checkpoints" / "ckpt_00000006").rename(parts / "checkpoints" / ".tmp_ckpt_00000006")
    torchrun(parts, resume_from_checkpoint=True)
    assert_same_run(straight, parts, 10)
