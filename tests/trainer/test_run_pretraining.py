"""The entry, trainer/run_pretraining.py, end to end on CPU (fp32, tiny model): what a run
writes to output_dir, and one clear line for each kind of bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from tests.helpers.hostile_pickle import RunsCode
from tests.helpers.trainer_cli import ROOT, SCRIPT, base_args, env, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")


def test_trains_and_writes_the_output_dir(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    out = tmp_path / "run"
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, eval_every=4,
                          keep_checkpoints=1, tensorboard=True)) == 0
    for name in ("hparams.json", "model_config.json", "vocab.txt", "tokenizer_config.json"):
        assert (out / name).is_file(), name
    assert json.loads((out / "tokenizer_config.json").read_text())["do_lower_case"] is False
    hp = json.loads((out / "hparams.json").read_text())
    assert hp["precision"] == "fp32" and hp["world_size"] == 1 and hp["global_batch_size"] == 8
    assert "commit" in hp["git"]  # the tests run inside the project's git checkout
    log = read_log(out)
    train = [r for r in log if "loss" in r]
    assert [r["step"] for r in train] == list(range(1, 9))
    assert {"step", "loss", "mlm_loss", "nsp_loss", "lr", "samples_per_sec"} <= set(train[0])
    evals = [r for r in log if "eval_mlm_loss" in r]
    assert [r["step"] for r in evals] == [4, 8]
    assert 0 <= evals[0]["eval_mlm_acc"] <= 1 and 0 <= evals[0]["eval_nsp_acc"] <= 1
    assert list((out / "tensorboard").glob("events.out.tfevents.*"))
    ckpts = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert ckpts == ["ckpt_00000008"]  # keep_checkpoints=1 removed ckpt_00000004
    meta = json.loads((out / "checkpoints" / "ckpt_00000008" / "meta.json").read_text())
    assert meta["step"] == 8 and meta["phase"] == 1 and meta["model_config"]["hidden_size"] == 32
    sd = torch.load(out / "checkpoints" / "ckpt_00000008" / "model.pt", weights_only=True)
    assert "cls.predictions.decoder.weight" in sd and "bert.embeddings.word_embeddings.weight" in sd
    # a rerun without --resume_from_checkpoint refuses to mix runs
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab)) == 1


# ---- bad input: one clear line, exit status 1, no traceback --------------------------------

def test_empty_input_dir_by_path_one_line(tiny_bert_config, tmp_path):
    (tmp_path / "empty").mkdir()
    res = subprocess.run([sys.executable, str(SCRIPT), *base_args(tmp_path / "empty", tiny_bert_config,
                                                                  tmp_path / "o")],
                         env=env(), capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "no *training*.hdf5" in lines[0]


def test_help_as_module():
    res = subprocess.run([sys.executable, "-m", "trainer.run_pretraining", "--help"], cwd=ROOT,
                         env=env(), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "--gradient_accumulation_steps" in res.stdout


def one_error_line(capsys, argv, match):
    assert main(argv) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("Error: "), err
    assert match in err[0], err[0]


def test_wrong_schema(tiny_bert_config, tmp_path, capsys):
    import h5py

    d = tmp_path / "bad"
    d.mkdir()
    with h5py.File(d / "xx_training_0.hdf5", "w") as fh:
        fh["input_ids"] = [[1, 2]]
    one_error_line(capsys, base_args(d, tiny_bert_config, tmp_path / "o"), "wrong schema")


def test_vocab_larger_than_model(tiny_shards, tiny_vocab, tmp_path, capsys):
    cfg = {"vocab_size": 150, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
           "intermediate_size": 64, "max_position_embeddings": 64, "type_vocab_size": 2}
    (tmp_path / "small.json").write_text(json.dumps(cfg))
    one_error_line(capsys, base_args(tiny_shards, tmp_path / "small.json", tmp_path / "o", tiny_vocab),
                   "has 200 tokens but the model's vocab_size is 150")
    # without --vocab_file the data's ids are checked when read
    one_error_line(capsys, base_args(tiny_shards, tmp_path / "small.json", tmp_path / "o2"),
                   ">= the model's vocab_size 150")


def test_missing_config_keys(tiny_shards, tiny_bert_config, tmp_path, capsys):
    cfg = json.loads(tiny_bert_config.read_text())
    del cfg["hidden_size"]
    (tmp_path / "nohidden.json").write_text(json.dumps(cfg))
    one_error_line(capsys, base_args(tiny_shards, tmp_path / "nohidden.json", tmp_path / "o"),
                   "hidden_size")
    (tmp_path / "run.json").write_text(json.dumps({"bert_config": str(tiny_bert_config),
                                                   "output_dir": str(tmp_path / "o")}))
    one_error_line(capsys, ["--config_file", str(tmp_path / "run.json")], "--input_dir is required")
    (tmp_path / "typo.json").write_text(json.dumps({"learning_rat": 1e-3}))
    one_error_line(capsys, ["--config_file", str(tmp_path / "typo.json")], "unknown key 'learning_rat'")
    one_error_line(capsys, ["--bogus_flag"], "unrecognized arguments")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_device_cuda_without_gpu_one_line(tiny_shards, tiny_bert_config, tmp_path, capsys):
    one_error_line(capsys, base_args(tiny_shards, tiny_bert_config, tmp_path / "o", device="cuda"),
                   "no CUDA device is available")
    assert not (tmp_path / "o").exists()


def test_a_checkpoint_holding_code_is_refused_not_run(tiny_shards, tiny_bert_config, tmp_path,
                                                     capsys):
    out, marker = tmp_path / "run", tmp_path / "code_ran"
    assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=4, steps_this_run=2,
                          checkpoint_every=2)) == 0
    ckpt = out / "checkpoints" / "ckpt_00000002"
    state = torch.load(ckpt / "trainer_state.pt", weights_only=True)
    torch.save({**state, "extra": RunsCode(marker)}, ckpt / "trainer_state.pt")
    one_error_line(capsys, base_args(tiny_shards, tiny_bert_config, out, max_steps=4,
                                     checkpoint_every=2, resume_from_checkpoint=True), "refused")
    # a phase-1 model.pt shared for phase 2 is read the same way
    torch.save({"weights": RunsCode(marker)}, tmp_path / "model.pt")
    one_error_line(capsys, base_args(tiny_shards, tiny_bert_config, tmp_path / "p2", phase2=True,
                                     init_checkpoint=tmp_path / "model.pt"), "could run code")
    assert not marker.exists()
