"""--tokens_per_step through the trainer: each phase's micro-batch and accumulation from the
tokens a step, the same tokens in every phase, recorded and logged; the same losses as the
run that says its batch in rows; bad steps refused in one line before anything is written; and
the CUDA plan (the card's micro-batch) checked on the CPU."""
from __future__ import annotations

import json

import pytest

from tests.helpers.trainer_cli import ROOT, assert_same_run, base_args, one_error, read_log
from tests.trainer.conftest import SEQ_LEN, make_shard_dir
from trainer.config import load_config
from trainer.errors import TrainError
from trainer.models import get_family
from trainer.run_pretraining import main
from trainer.schedule.plan import RunPhase
from trainer.start.parts import size_steps_in_tokens

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def phase_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tps")
    return {seq: make_shard_dir(root / f"s{seq}", sizes=(48, 40), test_sizes=(16,), seq_len=seq,
                                max_pred=seq // 4) for seq in (64, 128, 256)}


def phases_file(path, dirs, **first):
    path.write_text(json.dumps([{"input_dir": str(dirs[64]), "share": 0.5, **first},
                                {"input_dir": str(dirs[128]), "share": 0.3},
                                {"input_dir": str(dirs[256]), "share": 0.2, "global_rope_theta": 160000}]))
    return path


def modern(cfg, out, vocab, **kw):
    return base_args(None, cfg, out, vocab=vocab, model_type="modernbert", masking="dynamic",
                     optimizer="adamw", learning_rate=1e-3, max_steps=6, checkpoint_every=6, **kw)


def test_a_step_in_tokens_through_three_phases(phase_dirs, modern_config, tiny_vocab, tmp_path, caplog):
    """1,024 tokens a step, micro-batches of at most 4 rows: 16 x 64 = 4 x 4 rows, 8 x 128 = 4 x 2,
    4 x 256 = 4 x 1."""
    out = tmp_path / "run"
    phases = phases_file(tmp_path / "phases.json", phase_dirs)
    caplog.set_level("INFO", logger="trainer")
    assert main(modern(modern_config, out, tiny_vocab, train_batch_size=4, tokens_per_step=1024)
                + ["--phases", str(phases)]) == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("step size")]
    assert lines == [
        "step size, phase 1 of 3 (64-token rows): micro-batch 4 rows x 4 accumulation = 1,024 tokens a step",
        "step size, phase 2 of 3 (128-token rows): micro-batch 4 rows x 2 accumulation = 1,024 tokens a step",
        "step size, phase 3 of 3 (256-token rows): micro-batch 4 rows x 1 accumulation = 1,024 tokens a step"]
    hp = json.loads((out / "hparams.json").read_text())
    assert hp["tokens_per_step"] == 1024
    assert (hp["train_batch_size"], hp["gradient_accumulation_steps"], hp["global_batch_size"]) == (4, 4, 16)
    plan = [(p["seq_len"], p["train_batch_size"], p["gradient_accumulation_steps"], p["tokens_per_step"])
            for p in hp["phase_plan"]]
    assert plan == [(64, 4, 4, 1024), (128, 4, 2, 1024), (256, 4, 1, 1024)]
    log = read_log(out)
    starts = [(r["seq_len"], r["gradient_accumulation_steps"]) for r in log if "phase_start" in r]
    assert starts == [(64, 4), (128, 2), (256, 1)]
    train = {r["step"]: r for r in log if "loss" in r}
    assert len(train) == 6 and all(r["loss"] > 0 for r in train.values())

    # stopped in phase 2 and resumed: the same losses; resumed on "another card" (micro-batches
    # of 2 rows, accumulation doubled): the same rows a step, so the resume is taken
    parts, other = tmp_path / "parts", tmp_path / "other"
    for run, batch in ((parts, 4), (other, 4), (other, 2)):
        resume = run.exists()
        assert main(modern(modern_config, run, tiny_vocab, train_batch_size=batch, tokens_per_step=1024,
                           steps_this_run=None if resume else 4, resume_from_checkpoint=resume)
                    + ["--phases", str(phases)]) == 0
    assert main(modern(modern_config, parts, tiny_vocab, train_batch_size=4, tokens_per_step=1024,
                       resume_from_checkpoint=True) + ["--phases", str(phases)]) == 0
    assert_same_run(out, parts, 6)
    from trainer.export.cli import main as export

    assert export(["--checkpoint_dir", str(out), "--output", str(tmp_path / "hf")]) == 0
    card = (tmp_path / "hf" / "README.md").read_text()
    assert "| 1 | 64 | 1-3 | 4 × 4 |" in card and "| 3 | 256 | 5-6 | 4 × 1 |" in card
    assert [r["step"] for r in read_log(other) if "loss" in r] == list(range(1, 7))


def test_the_same_losses_as_the_batch_said_in_rows(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    """tokens_per_step = 4 rows x 2 micro-steps x SEQ_LEN is --train_batch_size 4
    --gradient_accumulation_steps 2, step for step."""
    rows, tokens = tmp_path / "rows", tmp_path / "tokens"
    assert main(base_args(tiny_shards, tiny_bert_config, rows, train_batch_size=4, max_steps=4,
                          gradient_accumulation_steps=2)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, tokens, train_batch_size=4, max_steps=4,
                          tokens_per_step=8 * SEQ_LEN)) == 0
    a, b = ([(r["step"], r["loss"], r["grad_norm"]) for r in read_log(run) if "loss" in r] for run in (rows, tokens))
    assert a == b and len(a) == 4
    hp = json.loads((tokens / "hparams.json").read_text())
    assert (hp["train_batch_size"], hp["gradient_accumulation_steps"], hp["tokens_per_step"]) == (4, 2, 8 * SEQ_LEN)


@pytest.mark.parametrize("extra, said", [
    ({"tokens_per_step": 16}, f"is less than one row a rank of {SEQ_LEN} tokens on 1 rank: give at least {SEQ_LEN}"),
    ({"tokens_per_step": 3 * SEQ_LEN + 1}, f"give {3 * SEQ_LEN} or {4 * SEQ_LEN}"),
    ({"tokens_per_step": 256, "gradient_accumulation_steps": 2},
     "--tokens_per_step sets each phase's gradient accumulation: leave out --gradient_accumulation_steps 2"),
])
def test_a_step_that_cannot_be_made_is_one_line_and_nothing_is_written(tiny_shards, tiny_bert_config, tmp_path,
                                                                      capsys, extra, said):
    out = tmp_path / "out"
    one_error(capsys, base_args(tiny_shards, tiny_bert_config, out, **extra), said, out=out)


def cuda_plan(phase_dirs, modern_config, tmp_path, card_gib, **kw):
    """size_steps_in_tokens of a resolved --phases config as the trainer on CUDA sees it (the
    device set to cuda after resolving on this CPU machine, the card's memory given)."""
    phases = phases_file(tmp_path / "p.json", phase_dirs)
    config = load_config(["--model_config", str(modern_config), "--model_type", "modernbert", "--no_nsp",
                          "--phases", str(phases), "--output_dir", str(tmp_path / "o"), "--device", "cpu",
                          *[x for k, v in kw.items() for x in (f"--{k}", str(v))]]).replace(device="cuda")
    run = [RunPhase(i, p.input_dir, p.share, seq, seq // 4, config.train_batch_size, None, 1e-3)
           for i, (p, seq) in enumerate(zip(config.phases, (64, 128, 256)))]
    family = get_family("modernbert")
    base = family.read_config_file(ROOT / "trainer" / "configs" / "modernbert_base.json")
    return size_steps_in_tokens(config, run, family, base, world_size=1, card_gib=card_gib)


def test_the_config_file_key(tiny_shards, tiny_bert_config, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"tokens_per_step": 4096, "train_batch_size": 16}))
    config = load_config(["--config_file", str(cfg), "--model_config", str(tiny_bert_config), "--input_dir",
                          str(tiny_shards), "--output_dir", str(tmp_path / "o"), "--device", "cpu"])
    assert config.tokens_per_step == 4096 and config.to_dict()["tokens_per_step"] == 4096


def test_on_cuda_the_micro_batch_is_the_cards(phase_dirs, modern_config, tmp_path):
    """ModernBERT-base on an 80 GiB card: 65,536 tokens a micro-batch (trainer/runtime/card.py)."""
    config, phases, lines = cuda_plan(phase_dirs, modern_config, tmp_path, 80, tokens_per_step=262_144)
    assert [(p.train_batch_size, p.gradient_accumulation_steps) for p in phases] == [(1024, 4), (512, 4), (256, 4)]
    assert config.train_batch_size == 1024 and config.gradient_accumulation_steps == 4
    assert [p.train_batch_size for p in config.phases] == [1024, 512, 256]
    assert lines[2].endswith("micro-batch 256 rows x 4 accumulation = 262,144 tokens a step")
    # a --train_batch_size given is the cap, the card's or not
    _, phases, _ = cuda_plan(phase_dirs, modern_config, tmp_path, 80, tokens_per_step=262_144, train_batch_size=64)
    assert [p.train_batch_size for p in phases] == [64, 64, 64]


def test_on_cuda_a_card_too_small_for_one_row_is_one_line(phase_dirs, modern_config, tmp_path):
    with pytest.raises(TrainError) as err:
        cuda_plan(phase_dirs, modern_config, tmp_path, 2.5, tokens_per_step=262_144)
    assert str(err.value).startswith("phase 1: a micro-batch of one 64-token row does not fit a card of 2.5 GiB")


def test_the_ranks_are_torchruns(tiny_shards, tiny_bert_config, tmp_path, monkeypatch):
    """Before the process group exists the world size is torchrun's WORLD_SIZE: two ranks train
    half the rows a rank for the same tokens a step."""
    family = get_family("bert")
    config = load_config(base_args(tiny_shards, tiny_bert_config, tmp_path / "o", tokens_per_step=16 * SEQ_LEN))
    phase = [RunPhase(0, str(tiny_shards), 1.0, SEQ_LEN, 5, config.train_batch_size, None, 1e-2)]
    model = family.read_config_file(tiny_bert_config)
    for ranks, rows in (("1", 16), ("2", 8)):
        monkeypatch.setenv("WORLD_SIZE", ranks)
        config_k, (sized,), _ = size_steps_in_tokens(config, phase, family, model)
        assert (sized.train_batch_size, sized.gradient_accumulation_steps) == (8, rows // 8)
        assert config_k.train_batch_size * config_k.gradient_accumulation_steps == rows
