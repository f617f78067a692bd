"""--model_type modernbert: trains MLM only on the trainer's batch, resumes exactly, exports a
folder transformers loads as ModernBertForMaskedLM with the trainer's logits, fine-tunes with
trainer.finetune; it implies --no_nsp (it has no next-sentence head); NSP with packed data is one
Error line."""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from tests.helpers.finetune_data import tagged_sentences, write_conll
from tests.helpers.trainer_cli import assert_same_run, base_args, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
transformers = pytest.importorskip("transformers")

MODERN = dict(model_type="modernbert", no_nsp=True, masking="dynamic", mlm_probability=0.15,
              mask_replace_prob=1.0, random_replace_prob=0.0, lr_schedule="wsd")


def test_modernbert_resumes_exactly_and_exports_the_trainer_logits(tiny_shards, tiny_vocab,
                                                                   modern_config, tmp_path):
    kw = dict(max_steps=6, checkpoint_every=3, eval_every=6, **MODERN)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(base_args(tiny_shards, modern_config, straight, vocab=tiny_vocab, **kw)) == 0
    assert main(base_args(tiny_shards, modern_config, parts, vocab=tiny_vocab, steps_this_run=3,
                          **kw)) == 0
    assert main(base_args(tiny_shards, modern_config, parts, vocab=tiny_vocab,
                          resume_from_checkpoint=True, **kw)) == 0
    assert_same_run(straight, parts, 6)
    log = read_log(straight)
    train = [r for r in log if "loss" in r]
    assert len(train) == 6 and all("nsp_loss" not in r for r in train)
    assert any("eval_mlm_acc" in r for r in log)

    from trainer.export import main as export_main
    from trainer.models.modernbert import FAMILY, ModernBertForPreTraining

    hf_dir = tmp_path / "hf"
    assert export_main(["--checkpoint_dir", str(straight), "--output", str(hf_dir)]) == 0
    hf, info = transformers.AutoModelForMaskedLM.from_pretrained(hf_dir, output_loading_info=True)
    assert type(hf).__name__ == "ModernBertForMaskedLM" and not any(info.values()), info
    assert "ModernBertForMaskedLM.from_pretrained" in (hf_dir / "README.md").read_text()
    ckpt = straight / "checkpoints" / "ckpt_00000006"
    meta = json.loads((ckpt / "meta.json").read_text())
    ours = ModernBertForPreTraining(FAMILY.read_config(meta["model_config"], "meta.json"))
    ours.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True))
    ours.eval(), hf.eval()
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(104, 200, (2, 32), generator=g)
    mask = torch.ones(2, 32, dtype=torch.long)
    mask[1, 20:] = 0
    positions = torch.tensor([[1, 5, 9, 30], [2, 3, 7, 19]])
    with torch.no_grad():
        mine = ours(input_ids=ids, input_mask=mask, masked_lm_positions=positions).slot_logits
        theirs = hf(input_ids=ids, attention_mask=mask).logits
    expected = torch.stack([theirs[b, positions[b]] for b in range(2)]).reshape(8, -1)
    torch.testing.assert_close(mine, expected, atol=1e-5, rtol=1e-5)

    # the fine-tuning tool takes it like a BERT
    from trainer.finetune.__main__ import main as finetune_main

    write_conll(tmp_path / "train.conll", tagged_sentences(40, 1))
    write_conll(tmp_path / "dev.conll", tagged_sentences(20, 2))
    out = tmp_path / "ner"
    assert finetune_main(list(map(str, [
        "--model", hf_dir, "--task", "ner", "--train_file", tmp_path / "train.conll",
        "--validation_file", tmp_path / "dev.conll", "--output_dir", out, "--seeds", "1",
        "--epochs", "1", "--learning_rate", "1e-3"]))) == 0
    res = json.loads((out / "results.json").read_text())
    assert len(res["pretrained"]["scores"]) == 1


@pytest.mark.parametrize("extra, message", [
    (dict(model_type="gpt"), "argument --model_type: invalid choice"),
    (dict(train_budget="2 weeks"), "--train_budget '2 weeks' cannot be read"),
])
def test_bad_recipe_settings_are_one_line(tiny_shards, tiny_vocab, modern_config, tmp_path, capsys,
                                          extra, message):
    assert main(base_args(tiny_shards, modern_config, tmp_path / "o", vocab=tiny_vocab, **extra)) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error:") and message in err[0], err


def test_modernbert_without_no_nsp_trains_masked_lm_only(tiny_shards, tiny_vocab, modern_config, tmp_path):
    out = tmp_path / "implied"
    assert main(base_args(tiny_shards, modern_config, out, vocab=tiny_vocab, model_type="modernbert",
                          max_steps=2, checkpoint_every=2)) == 0
    hp = json.loads((out / "hparams.json").read_text())
    assert hp["no_nsp"] is True and hp["objective"].startswith("modernbert, masked LM only")
    assert all("nsp_loss" not in r for r in read_log(out))


def test_packed_data_with_nsp_is_one_line(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path, capsys):
    packed = tmp_path / "hdf5_lower_case_0_seq_len_32_max_pred_5_packed"
    shutil.copytree(tiny_shards, packed)
    assert main(base_args(packed, tiny_bert_config, tmp_path / "o", vocab=tiny_vocab)) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error:") and "packed rows" in err[0] \
        and "--no_nsp" in err[0], err


def test_a_phase_sets_rope_theta_as_a_model_built_with_it(modern_config):
    """set_rope_thetas (what a phase asks) gives the rotary buffers and the config of a model built
    with that θ, under transformers 5's rope_parameters and the older names alike."""
    from trainer.models import get_family

    family = get_family("modernbert")
    config = family.read_config_file(modern_config)
    assert family.rope_thetas(config) == {"global_rope_theta": 160000.0, "local_rope_theta": 10000.0}
    model = family.build(config, unpad=False, nsp=False)
    family.set_rope_thetas(model, {"global_rope_theta": 40000.0, "local_rope_theta": 5000.0})
    other = family.read_config_file(modern_config)
    other.rope_parameters["full_attention"]["rope_theta"] = 40000.0
    other.rope_parameters["sliding_attention"]["rope_theta"] = 5000.0
    built = family.build(other, unpad=False, nsp=False)
    for name, buf in built.model.rotary_emb.named_buffers():
        assert torch.equal(buf, dict(model.model.rotary_emb.named_buffers())[name]), name
    saved = family.config_dict(model.config)
    assert saved["global_rope_theta"] == 40000.0 and saved["local_rope_theta"] == 5000.0
    again = family.read_config(saved, "meta.json")
    assert family.rope_thetas(again) == {"global_rope_theta": 40000.0, "local_rope_theta": 5000.0}


def test_positions_fit_the_longest_rows_by_family(modern_config, tiny_bert_config):
    """RoPE has no table: ModernBERT's max_position_embeddings is raised (one note); a learned
    table must already cover the rows (one line that says what to set)."""
    from trainer.models import get_family

    modern = get_family("modernbert")
    config = modern.read_config_file(modern_config)
    have = config.max_position_embeddings
    raised, note = modern.fit_positions(config, 8 * have)
    assert raised.max_position_embeddings == 8 * have and config.max_position_embeddings == have
    assert f"raised from {have} to {8 * have}" in note and modern.fit_positions(config, have) == (config, None)
    bert = get_family("bert")
    config = bert.read_config_file(tiny_bert_config)
    assert bert.fit_positions(config, 64) == (config, None)
    with pytest.raises(ValueError, match="covers 64: pass --max_position_embeddings 128 beside --init_from"):
        bert.fit_positions(config, 128)
