"""A model that exists, on longer rows (trainer/start/longer_rows.py, the families' extend_positions and
extend_position_rows): --max_position_embeddings N beside --init_from extends a learned table by
copying its rows in order (RoBERTa's reserved rows stay), in one log line; --global_rope_theta /
--local_rope_theta set ModernBERT's θ, with or without phases; each mistake one `Error:` line and
nothing written."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.doc_attention import packed_dir
from tests.helpers.pretrained_models import save_model, tokenizer_folder
from tests.helpers.trainer_cli import base_args, one_error, read_log
from tests.trainer.models.test_families import init_args
from trainer.models import get_family
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
BERT_TABLE = "bert.embeddings.position_embeddings.weight"


def ckpt(run, step=None):
    folders = sorted((run / "checkpoints").iterdir())
    return folders[-1] if step is None else run / "checkpoints" / f"ckpt_{step:08d}"


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    root = tmp_path_factory.mktemp("rows")
    return {seq: packed_dir(root, seq) for seq in (64, 256)}


@pytest.fixture(scope="module")
def bert_64(rows, tiny_bert_config, tiny_vocab, tmp_path_factory):
    """A BERT trained from scratch on rows of 64 (its table's 64 positions)."""
    out = tmp_path_factory.mktemp("bert64") / "run"
    assert main(base_args(rows[64], tiny_bert_config, out, vocab=tiny_vocab, max_steps=2, no_nsp=True,
                          checkpoint_every=2)) == 0
    return out


@pytest.mark.parametrize("family_name,offset", [("bert", 0), ("roberta", 2), ("distilbert", 0)])
def test_the_new_rows_repeat_the_learned_ones_and_reserved_rows_stay(family_name, offset):
    from tests.helpers.doc_attention import tiny_config

    family, config = tiny_config(family_name, 6)
    if offset:
        config.pad_token_id = offset - 1
    have = family.max_positions(config)
    wider, note = family.extend_positions(config, 3 * have + 1)
    assert note is None and family.max_positions(wider) == 3 * have + 1
    assert wider.max_position_embeddings == 3 * have + 1 + offset and family.max_positions(config) == have
    table = torch.randn(config.max_position_embeddings, 4)
    state, note = family.extend_position_rows({family.position_table: table, "x": table[:1]}, wider)
    new = state[family.position_table]
    assert new.shape == (3 * have + 1 + offset, 4) and state["x"] is not None
    assert torch.equal(new[:offset], table[:offset])
    for k in range(3 * have + 1):
        assert torch.equal(new[offset + k], table[offset + k % have])
    assert f"extended from {have} to {3 * have + 1} positions" in note and "Longformer" in note
    assert ("rows 0-1 before the first position kept" in note) == bool(offset)
    same, none = family.extend_position_rows(state, wider)   # already long enough: untouched
    assert none is None and same is state
    with pytest.raises(ValueError, match=f"smaller than the .* model's {have} positions"):
        family.extend_positions(config, have - 1)


def test_modernbert_has_no_table_to_extend_and_says_what_to_do():
    family = get_family("modernbert")
    with pytest.raises(ValueError, match="no table to extend: leave it out .* --global_rope_theta"):
        family.extend_positions(None, 2048)


def test_a_run_extends_the_table_of_a_run_trained_at_64(bert_64, rows, tmp_path, caplog):
    caplog.set_level("INFO", logger="trainer")
    out = tmp_path / "long"
    assert main(init_args(rows[256], bert_64, out, no_nsp=True, max_position_embeddings=256, max_steps=2,
                          checkpoint_every=1, learning_rate=1e-9)) == 0
    lines = [r.getMessage() for r in caplog.records if "position table extended" in r.getMessage()]
    assert lines == ["BERT's position table extended from 64 to 256 positions by copying its 64 learned "
                     "rows in order (Longformer's recipe: position k takes row k mod 64)"]
    old = torch.load(ckpt(bert_64) / "model.pt", weights_only=True)[BERT_TABLE]
    new = torch.load(ckpt(out, 1) / "model.pt", weights_only=True)[BERT_TABLE]
    assert new.shape[0] == 256
    assert torch.allclose(new, old.repeat(4, 1), atol=1e-6)   # one step at lr 1e-9
    meta = json.loads((ckpt(out) / "meta.json").read_text())
    assert meta["model_config"]["max_position_embeddings"] == 256
    assert json.loads((out / "hparams.json").read_text())["max_position_embeddings"] == 256
    assert [r["step"] for r in read_log(out) if "loss" in r] == [1, 2]


def test_a_transformers_roberta_keeps_its_reserved_rows(rows, tmp_path):
    tok = tokenizer_folder(tmp_path, "bpe")
    folder = save_model(tmp_path / "roberta", "RobertaForMaskedLM", tok)   # 40 rows: pad + 1 + 38
    pad = json.loads((folder / "config.json").read_text())["pad_token_id"]
    out = tmp_path / "long"
    assert main(init_args(rows[64], folder, out, max_position_embeddings=64, max_steps=1,
                          learning_rate=1e-9)) == 0
    from safetensors.torch import load_file

    old = load_file(folder / "model.safetensors")["roberta.embeddings.position_embeddings.weight"]
    new = torch.load(ckpt(out) / "model.pt", weights_only=True)["roberta.embeddings.position_embeddings.weight"]
    learned = old.shape[0] - pad - 1
    assert new.shape[0] == pad + 1 + 64
    assert torch.allclose(new[:pad + 1], old[:pad + 1], atol=1e-6)
    assert torch.allclose(new[pad + 1:], old[pad + 1:].repeat(2, 1)[:64], atol=1e-6)
    assert learned == 38


def test_bad_extensions_are_one_line_each(bert_64, rows, tiny_bert_config, modern_config, tiny_vocab,
                                          tmp_path, capsys):
    out = tmp_path / "never"
    one_error(capsys, init_args(rows[256], bert_64, out, no_nsp=True), "rows of 256 tokens",
              "learned position table covers 64", "pass --max_position_embeddings 256 beside --init_from",
              out=out)
    one_error(capsys, init_args(rows[256], bert_64, out, no_nsp=True, max_position_embeddings=32),
              "--max_position_embeddings 32 is smaller than the BERT model's 64 positions", out=out)
    one_error(capsys, init_args(rows[256], bert_64, out, no_nsp=True, max_position_embeddings=128),
              "rows of 256 tokens", "covers 128", out=out)
    one_error(capsys, base_args(rows[64], tiny_bert_config, out, vocab=tiny_vocab, no_nsp=True,
                                max_position_embeddings=128),
              "beside --init_from", "max_position_embeddings in --model_config", out=out)
    one_error(capsys, init_args(rows[64], bert_64, out, no_nsp=True, global_rope_theta=1e5),
              "--global_rope_theta is given, but BERT has no rotary position embeddings", out=out)
    one_error(capsys, base_args(rows[64], modern_config, out, vocab=tiny_vocab, model_type="modernbert",
                                rope_theta=1e5), "ModernBERT takes global_rope_theta / local_rope_theta", out=out)
    one_error(capsys, base_args(rows[64], modern_config, out, vocab=tiny_vocab, model_type="modernbert",
                                global_rope_theta=-1), "--global_rope_theta must be a number > 0", out=out)


@pytest.fixture(scope="module")
def modern_64(rows, tiny_vocab, tmp_path_factory):
    """A ModernBERT trained from scratch at 64 (its config says 64 positions, θ 10,000)."""
    root = tmp_path_factory.mktemp("modern64")
    cfg = root / "m.json"
    cfg.write_text(json.dumps({"vocab_size": 200, "hidden_size": 32, "num_hidden_layers": 3,
                               "num_attention_heads": 2, "intermediate_size": 48, "max_position_embeddings": 64,
                               "local_attention": 16, "global_rope_theta": 10000.0}))
    out = root / "run"
    assert main(base_args(rows[64], cfg, out, vocab=tiny_vocab, model_type="modernbert", max_steps=2,
                          checkpoint_every=2)) == 0
    return out


def test_modernbert_takes_theta_from_the_flags_beside_init_from(modern_64, rows, tmp_path, caplog):
    caplog.set_level("INFO", logger="trainer")
    out = tmp_path / "long"
    assert main(init_args(rows[256], modern_64, out, global_rope_theta=160000, max_steps=1)) == 0
    said = [r.getMessage() for r in caplog.records]
    assert "RoPE θ set by the flags: global_rope_theta 10000 -> 160000" in said
    assert any("max_position_embeddings raised from 64 to 256" in line for line in said)
    config = json.loads((ckpt(out) / "meta.json").read_text())["model_config"]
    assert config["rope_parameters"]["full_attention"]["rope_theta"] == 160000.0
    assert config["global_rope_theta"] == 160000.0 and config["local_rope_theta"] == 10000.0
    assert config["max_position_embeddings"] == 256


def test_modernbert_takes_theta_from_its_phases_beside_init_from(modern_64, rows, tmp_path, caplog):
    phases = tmp_path / "phases.json"
    phases.write_text(json.dumps([{"input_dir": str(rows[64]), "share": 0.5},
                                  {"input_dir": str(rows[256]), "share": 0.5, "global_rope_theta": 80000}]))
    out = tmp_path / "long"
    argv = [a for a in init_args(rows[64], modern_64, out, max_steps=2, checkpoint_every=1,
                                 local_rope_theta=5000)]
    argv = argv[:argv.index("--input_dir")] + argv[argv.index("--input_dir") + 2:] + ["--phases", str(phases)]
    assert main(argv) == 0
    one = json.loads((ckpt(out, 1) / "meta.json").read_text())["model_config"]["rope_parameters"]
    two = json.loads((ckpt(out, 2) / "meta.json").read_text())["model_config"]["rope_parameters"]
    assert (one["full_attention"]["rope_theta"], one["sliding_attention"]["rope_theta"]) == (10000.0, 5000.0)
    assert (two["full_attention"]["rope_theta"], two["sliding_attention"]["rope_theta"]) == (80000.0, 5000.0)


def test_a_phase_run_extends_a_learned_table(bert_64, rows, tmp_path, capsys):
    phases = tmp_path / "phases.json"
    phases.write_text(json.dumps([{"input_dir": str(rows[64]), "share": 0.5},
                                  {"input_dir": str(rows[256]), "share": 0.5}]))
    argv = init_args(rows[64], bert_64, tmp_path / "x", no_nsp=True, max_steps=2)
    argv = argv[:argv.index("--input_dir")] + argv[argv.index("--input_dir") + 2:] + ["--phases", str(phases)]
    one_error(capsys, argv, "phase 2", "pass --max_position_embeddings 256 beside --init_from", out=tmp_path / "x")
    assert main(argv + ["--max_position_embeddings", "256"]) == 0
    meta = json.loads((ckpt(tmp_path / "x") / "meta.json").read_text())
    assert meta["model_config"]["max_position_embeddings"] == 256
