"""The context evaluation (trainer/evaluation/context.py): the measure moves where the model reads far context
(a model whose weights are a rule, and a tiny ModernBERT that learned a task only the long context
solves), stays put where it cannot, goes into train_log.jsonl at the evaluations of long rows, and
the standalone form (python -m trainer.evaluation) gives the run's own figures."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.context_task import KeyReader, far_key_documents, write_far_key_shard
from tests.helpers.doc_attention import packed_dir
from tests.helpers.trainer_cli import base_args, read_log
from trainer.data.shards import find_shards
from trainer.evaluation.cli import main as context_eval
from trainer.evaluation.context import context_line, evaluate_context, phase_context
from trainer.runtime.distributed import DistEnv

pytestmark = pytest.mark.usefixtures("one_thread")
ENV = DistEnv(0, 1, 0, torch.device("cpu"), None)


def far_key_dir(root, seq_len=2048, docs=None, seed=0, max_pred=400):
    d = root / f"hdf5_seq_len_{seq_len}_packed" / "xxwiki"
    docs = docs or far_key_documents(6, (seq_len - 2, seq_len - 2), seed=seed)
    write_far_key_shard(d / "xxwiki_training_0.hdf5", docs, seq_len, max_pred)
    write_far_key_shard(d / "xxwiki_test_0.hdf5", docs, seq_len, max_pred)
    return d.parent


def forward(module, batch):
    return module(**batch)


def test_a_model_that_reads_the_start_of_the_document_gains_everything(tmp_path):
    shards = find_shards(far_key_dir(tmp_path))
    res = evaluate_context(KeyReader(), shards.test, ENV, forward, long_width=2048, batch_tokens=4096,
                           unpad=False)
    assert res["eval_context_segments"] == 6 and res["eval_context_tokens"] > 6 * 100
    assert res["eval_context_acc_long"] == 1.0
    assert res["eval_context_acc_512"] == 0.0 and res["eval_context_acc_128"] == 0.0
    assert res["eval_context_gain"] == 1.0 and res["eval_context_long_width"] == 2048
    assert res["eval_context_loss_long"] < res["eval_context_loss_512"]
    assert "context gain +1.0000" in context_line(res)
    # the long view no wider than 512 (a learned table of 512): no more context than 512 gives
    capped = evaluate_context(KeyReader(), shards.test, ENV, forward, long_width=512, batch_tokens=4096,
                              unpad=False)
    assert capped["eval_context_acc_long"] == 0.0 and capped["eval_context_gain"] == 0.0
    assert capped["eval_context_tokens"] == res["eval_context_tokens"]
    # at most the first row: fewer segments, the same rule
    one = evaluate_context(KeyReader(), shards.test, ENV, forward, 2048, 4096, unpad=False, max_samples=1)
    assert one["eval_context_segments"] == 1 and one["eval_context_gain"] == 1.0


def test_rows_too_short_for_a_long_segment_give_nothing(tmp_path):
    shards = find_shards(packed_dir(tmp_path, 256))
    assert evaluate_context(KeyReader(), shards.test, ENV, forward, 256, 4096, unpad=False) == {}
    phase = type("P", (), {"seq_len": 256, "shards": shards, "eval_batch_size": 2})
    assert phase_context(KeyReader(), phase, None, ENV, forward) == {}
    assert "no held-out segment of 1,024+ tokens" in context_line({})


@pytest.fixture(scope="module")
def learned(tmp_path_factory, tiny_vocab):
    """A tiny ModernBERT (all layers global) trained through phases of 256 and 2,048 tokens on the
    far-key task (its keys' copies masked), evaluated at the end on rows of 2,048."""
    root = tmp_path_factory.mktemp("far")
    short = far_key_dir(root, 256, far_key_documents(400, (150, 250), seed=1, far=40), max_pred=64)
    long = far_key_dir(root, 2048, far_key_documents(30, (1100, 3000), seed=0))
    cfg = root / "m.json"
    cfg.write_text(json.dumps({"vocab_size": 200, "hidden_size": 64, "num_hidden_layers": 2,
                               "num_attention_heads": 2, "intermediate_size": 96, "max_position_embeddings": 2048,
                               "global_attn_every_n_layers": 1, "global_rope_theta": 160000.0}))
    phases = root / "phases.json"
    phases.write_text(json.dumps([{"input_dir": str(short), "share": 0.9, "train_batch_size": 16},
                                  {"input_dir": str(long), "share": 0.1, "train_batch_size": 2}]))
    out = root / "run"
    argv = base_args(None, cfg, out, vocab=tiny_vocab, model_type="modernbert", max_steps=300,
                     learning_rate=3e-3, optimizer="adamw", lr_schedule="wsd", eval_every=300,
                     checkpoint_every=300, log_every=50, seed=1) + ["--phases", str(phases)]
    from trainer.run_pretraining import main

    assert main(argv) == 0
    return out, long


@pytest.mark.slow
def test_a_tiny_model_learns_what_only_the_long_context_tells_and_the_measure_sees_it(learned, tmp_path, capsys):
    out, long = learned
    ev = [r for r in read_log(out) if "eval_loss" in r][-1]
    assert ev["eval_context_acc_long"] > ev["eval_context_acc_512"] + 0.1, ev
    assert ev["eval_context_gain"] == pytest.approx(ev["eval_context_acc_long"] - ev["eval_context_acc_512"])
    # the standalone form, on the run and on its export, gives the run's own figures
    from trainer.export.cli import main as export

    assert export(["--checkpoint_dir", str(out), "--output", str(tmp_path / "hf")]) == 0
    for model in (out, tmp_path / "hf"):
        capsys.readouterr()
        assert context_eval(["--model", str(model), "--input_dir", str(long), "--json",
                             str(tmp_path / "c.json")]) == 0
        assert capsys.readouterr().out.startswith("context evaluation on ")
        res = json.loads((tmp_path / "c.json").read_text())
        for key in ("eval_context_tokens", "eval_context_acc_long", "eval_context_acc_512", "eval_context_gain"):
            assert res[key] == pytest.approx(ev[key], abs=1e-6), key


def test_the_standalone_form_refuses_what_it_cannot_score(tmp_path, tiny_shards, capsys):
    for folder, words in ((tmp_path / "nothing", "holds no *test*.hdf5 files"),
                          (tiny_shards, "do not mark where documents start")):
        folder.mkdir(exist_ok=True)
        capsys.readouterr()
        assert context_eval(["--model", str(tmp_path), "--input_dir", str(folder)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("Error: ") and words in err[0], err


def test_an_evaluation_of_long_rows_logs_it(tmp_path, modern_config, tiny_vocab, caplog):
    from trainer.run_pretraining import main

    caplog.set_level("INFO", logger="trainer")
    cfg = json.loads(modern_config.read_text())
    (tmp_path / "m.json").write_text(json.dumps({**cfg, "max_position_embeddings": 2048}))
    out = tmp_path / "run"
    assert main(base_args(far_key_dir(tmp_path), tmp_path / "m.json", out, vocab=tiny_vocab,
                          model_type="modernbert", max_steps=2, train_batch_size=2, eval_every=1,
                          eval_max_samples=3)) == 0
    evals = [r for r in read_log(out) if "eval_loss" in r]
    assert [r["step"] for r in evals] == [1, 2]
    for r in evals:
        assert r["eval_context_segments"] == 3 and r["eval_context_long_width"] == 2048
        assert r["eval_context_gain"] == pytest.approx(r["eval_context_acc_long"] - r["eval_context_acc_512"])
    assert any("context gain" in rec.getMessage() for rec in caplog.records)
