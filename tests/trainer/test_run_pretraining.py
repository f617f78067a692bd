"""run_pretraining.py end to end on CPU (fp32, tiny model): outputs, exact resume, phase 2,
two gloo ranks, and one clear line for each kind of bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from trainer.run_pretraining import main

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "trainer" / "run_pretraining.py"
pytestmark = pytest.mark.usefixtures("one_thread")


def base_args(shards, cfg, out, vocab=None, **kw):
    opts = {"bert_config": cfg, "input_dir": shards, "output_dir": out, "train_batch_size": 8,
            "max_steps": 8, "log_every": 1, "checkpoint_every": 4, "learning_rate": 1e-2,
            "warmup_proportion": 0.1, "seed": 3, "device": "cpu", "tensorboard": False, **kw}
    if vocab:
        opts["vocab_file"] = vocab
    argv = []
    for k, v in opts.items():
        if k == "tensorboard":
            argv.append("--tensorboard" if v else "--no-tensorboard")
        elif v is True:
            argv.append(f"--{k}")
        elif v is not False and v is not None:
            argv += [f"--{k}", str(v)]
    return argv


def read_log(out):
    return [json.loads(line) for line in (Path(out) / "train_log.jsonl").read_text().splitlines()]


def env(**extra):
    e = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), **extra)
    e.pop("WIKI2BERT_TRACEBACK", None)
    return e


def test_trains_and_writes_the_output_dir(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    out = tmp_path / "run"
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, eval_every=4,
                          keep_checkpoints=1, tensorboard=True)) == 0
    for name in ("hparams.json", "bert_config.json", "vocab.txt", "tokenizer_config.json"):
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
    assert meta["step"] == 8 and meta["phase"] == 1 and meta["bert_config"]["hidden_size"] == 32
    sd = torch.load(out / "checkpoints" / "ckpt_00000008" / "model.pt", weights_only=True)
    assert "cls.predictions.decoder.weight" in sd and "bert.embeddings.word_embeddings.weight" in sd
    # a rerun without --resume_from_checkpoint refuses to mix runs
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab)) == 1


def test_resume_gives_the_losses_of_an_uninterrupted_run(tiny_shards, tiny_bert_config, tmp_path):
    kw = dict(gradient_accumulation_steps=2, eval_every=3, max_steps=8, checkpoint_every=3)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(base_args(tiny_shards, tiny_bert_config, straight, **kw)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, parts, steps_this_run=4, **kw)) == 0
    # a run killed after its step-3 checkpoint: step 4 was logged, then a half-written checkpoint
    (parts / "checkpoints" / "ckpt_00000004").rename(parts / "checkpoints" / ".tmp_ckpt_00000004")
    assert main(base_args(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True,
                          **kw)) == 0
    a, b = read_log(straight), read_log(parts)
    assert [r["step"] for r in a] == [r["step"] for r in b]
    for x, y in zip(a, b):
        for key in ("loss", "mlm_loss", "nsp_loss", "lr", "eval_loss"):
            if key in x:
                assert abs(x[key] - y[key]) <= 1e-5, (x["step"], key, x[key], y[key])
    # and the same final weights
    wa = torch.load(straight / "checkpoints" / "ckpt_00000008" / "model.pt", weights_only=True)
    wb = torch.load(parts / "checkpoints" / "ckpt_00000008" / "model.pt", weights_only=True)
    assert all(torch.allclose(wa[k], wb[k], atol=1e-6) for k in wa)
    # a finished run resumed again has nothing to do
    assert main(base_args(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True,
                          **kw)) == 0


def test_phase2_starts_from_phase1_weights_with_a_fresh_schedule(tiny_shards, tiny_bert_config, tmp_path):
    from trainer.config import parse_args
    from trainer.run_pretraining import Trainer

    p1 = tmp_path / "p1"
    assert main(base_args(tiny_shards, tiny_bert_config, p1, max_steps=2, checkpoint_every=2)) == 0
    args = parse_args(base_args(tiny_shards, tiny_bert_config, tmp_path / "p2", phase2=True,
                                init_checkpoint=p1, max_steps=4))
    trainer = Trainer(args)
    w1 = torch.load(p1 / "checkpoints" / "ckpt_00000002" / "model.pt", weights_only=True)
    assert all(torch.equal(v, trainer.model.state_dict()[k]) for k, v in w1.items())
    assert trainer.step == 0 and trainer.lr == 0.0 and not trainer.optimizer.state
    trainer.train()
    assert json.loads((tmp_path / "p2" / "checkpoints" / "ckpt_00000004" / "meta.json").read_text())["phase"] == 2
    # a phase-2 run from a folder with no checkpoint: one line, no output_dir left behind
    assert main(base_args(tiny_shards, tiny_bert_config, tmp_path / "p2b", phase2=True,
                          init_checkpoint=tmp_path / "nowhere")) == 1
    assert not (tmp_path / "p2b").exists()
    # resuming phase 2 in phase 1's output_dir is refused
    assert main(base_args(tiny_shards, tiny_bert_config, p1, phase2=True, init_checkpoint=p1,
                          resume_from_checkpoint=True)) == 1


def test_bf16_autocast_smoke(tiny_shards, tiny_bert_config, tmp_path):
    out = tmp_path / "bf16"
    assert main(base_args(tiny_shards, tiny_bert_config, out, precision="bf16", max_steps=2,
                          train_batch_size=4)) == 0
    assert all(torch.isfinite(torch.tensor(r["loss"])) for r in read_log(out))


def torchrun(shards, cfg, out, extra_env=None, **kw):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(SCRIPT), *base_args(shards, cfg, out, **kw)]
    res = subprocess.run(cmd, env=env(**(extra_env or {})), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]


@pytest.mark.slow
def test_two_gloo_ranks_learn_from_disjoint_data_and_resume_exactly(tiny_shards, tiny_bert_config,
                                                                     tmp_path):
    """2 ranks, 2 micro-steps per step: the loss falls, the ranks read disjoint data; a run
    killed after step 12 (its checkpoint half-written) resumes from step 10 and gives the
    uninterrupted run's losses and weights."""
    out, parts = tmp_path / "ddp", tmp_path / "parts"
    kw = dict(max_steps=30, learning_rate=2e-2, log_every=5, checkpoint_every=10,
              gradient_accumulation_steps=2, eval_every=15)
    torchrun(tiny_shards, tiny_bert_config, out, extra_env={"WIKI2BERT_TRACE_DATA": "1"}, **kw)
    log = [r for r in read_log(out) if "loss" in r]
    assert log[-1]["loss"] < log[0]["loss"] - 0.1, [r["loss"] for r in log]
    r0 = (out / "data_trace_rank0.txt").read_text().split()
    r1 = (out / "data_trace_rank1.txt").read_text().split()
    per_rank = (160 + 96 + 128) // 2
    assert len(r0) == len(r1) == 30 * 2 * 8
    # within an epoch the two ranks' samples are disjoint (and each rank's are distinct)
    e0, e1 = set(r0[:per_rank]), set(r1[:per_rank])
    assert len(e0) == len(e1) == per_rank and not e0 & e1
    assert sorted(os.listdir(out / "checkpoints" / "ckpt_00000030")) == [
        "meta.json", "model.pt", "rng_rank0.pt", "rng_rank1.pt", "trainer_state.pt"]

    torchrun(tiny_shards, tiny_bert_config, parts, steps_this_run=12, **kw)
    (parts / "checkpoints" / "ckpt_00000012").rename(parts / "checkpoints" / ".tmp_ckpt_00000012")
    torchrun(tiny_shards, tiny_bert_config, parts, resume_from_checkpoint=True, **kw)
    a, b = read_log(out), read_log(parts)
    assert [r["step"] for r in a] == [r["step"] for r in b]
    for x, y in zip(a, b):
        for key in ("loss", "mlm_loss", "nsp_loss", "lr", "eval_loss"):
            if key in x:
                assert abs(x[key] - y[key]) <= 1e-5, (x["step"], key, x[key], y[key])
    wa = torch.load(out / "checkpoints" / "ckpt_00000030" / "model.pt", weights_only=True)
    wb = torch.load(parts / "checkpoints" / "ckpt_00000030" / "model.pt", weights_only=True)
    assert all(torch.allclose(wa[k], wb[k], atol=1e-6) for k in wa)


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
    cfg = json.loads(Path(tiny_bert_config).read_text())
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


def test_config_file_values_and_command_line_wins(tiny_bert_config, tmp_path):
    from trainer.config import parse_args

    (tmp_path / "c.json").write_text(json.dumps({"bert_config": str(tiny_bert_config),
                                                 "input_dir": "d", "output_dir": "o",
                                                 "learning_rate": 1e-3, "max_steps": 50}))
    args = parse_args(["--config_file", str(tmp_path / "c.json"), "--max_steps", "7"])
    assert (args.learning_rate, args.max_steps, args.optimizer) == (1e-3, 7, "lamb")
    assert "learning_rate" in args.explicit and "optimizer" not in args.explicit
    # shipped configs find their model JSON beside them
    args = parse_args(["--config_file", str(ROOT / "trainer/configs/phase1_base.json"),
                       "--input_dir", "d", "--output_dir", "o"])
    assert Path(args.bert_config) == ROOT / "trainer/configs/bert_base.json"
    assert args.train_batch_size * args.gradient_accumulation_steps * 8 == 65536


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_device_cuda_without_gpu_one_line(tiny_shards, tiny_bert_config, tmp_path, capsys):
    one_error_line(capsys, base_args(tiny_shards, tiny_bert_config, tmp_path / "o", device="cuda"),
                   "no CUDA device is available")
    assert not (tmp_path / "o").exists()


def test_shipped_tiny_cpu_config_learns_in_30_steps(tiny_shards, tmp_path):
    """trainer/configs/tiny_cpu.json as shipped (BERT-tiny, 32k vocab, its lr and schedule):
    within 30 of its 200 steps the MLM loss must leave ln(vocab_size) (a too-low lr does not)."""
    import math

    out = tmp_path / "tiny"
    argv = ["--config_file", str(ROOT / "trainer/configs/tiny_cpu.json"), "--input_dir",
            str(tiny_shards), "--output_dir", str(out), "--steps_this_run", "30",
            "--eval_every", "0", "--no-tensorboard", "--checkpoint_every", "1000"]
    assert main(argv) == 0
    vocab = json.loads((out / "bert_config.json").read_text())["vocab_size"]
    last = [r for r in read_log(out) if "mlm_loss" in r][-1]  # mean of steps 21-30
    assert last["step"] == 30
    assert last["mlm_loss"] < math.log(vocab) - 1.0, (last["mlm_loss"], math.log(vocab))
