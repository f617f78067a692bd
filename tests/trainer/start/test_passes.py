"""Every run counts its passes over its text (trainer/start/passes.py): a real run says the plan's
and what it read in its log, records them in hparams.json and train_log.jsonl's last record,
from the encode manifest's record (per source, its weight counted) or from the files' rows alone;
phases add up; several languages count each by its sampling share; past 4 passes a warning with
the tokens the budget wants."""
from __future__ import annotations

import json
import logging
import shutil
from types import SimpleNamespace

import pytest

from pipeline.encoding.hdf5_format import TRAINING_TEXT
from tests.helpers.trainer_cli import base_args, read_log
from tests.trainer.conftest import make_shard_dir
from trainer.data.shards import find_shards
from trainer.run_pretraining import main
from trainer.schedule.plan import RunPhase, RunPlan
from trainer.start.passes import MAX_PASSES, count_passes

pytestmark = pytest.mark.usefixtures("one_thread")


def encoded(folder, rows: int, tokens: int, dupe: int = 1, sources=None):
    """The encode manifest's record of the text beside `folder`'s files."""
    record = {"rows": rows, "tokens": tokens, "dupe_factor": dupe,
              "sources": {k: {"tokens": t, "weight": w} for k, (t, w) in (sources or {}).items()}}
    (folder / "manifest.json").write_text(json.dumps({"stage": "encode", TRAINING_TEXT: record}))
    return folder


def test_a_run_records_its_passes_per_source(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path, caplog):
    data = shutil.copytree(tiny_shards, tmp_path / "hdf5")      # 384 training rows
    # the rows hold 2 copies of a text of 9,000 tokens: wikipedia's 6,000 and a web source's 3,000
    # at weight 2 (1,500 tokens of its own text, twice)
    encoded(data, rows=384, tokens=9000, dupe=2, sources={"wikipedia": (6000, 1.0), "web": (3000, 2.0)})
    out = tmp_path / "run"
    with caplog.at_level(logging.INFO, logger="trainer"):
        assert main(base_args(data, tiny_bert_config, out, vocab=tiny_vocab, max_steps=12)) == 0
    # 12 steps x 8 rows = 96 of 384 rows, each made of 2 copies of the text: half a pass
    planned = json.loads((out / "hparams.json").read_text())
    assert planned["passes"] == pytest.approx(0.5) and planned["passes_steps"] == 12
    assert planned["passes_tokens"] == 4500 and planned["text_tokens"] == 6000 + 1500
    assert planned["passes_by_source"] == {"wikipedia": {"passes": 0.5, "weight": 1.0, "tokens": 6000},
                                           "web": {"passes": 1.0, "weight": 2.0, "tokens": 1500}}
    assert planned["passes_most"] == 1.0
    # what it read: in the last training record (the plan's end), no record of its own
    log = read_log(out)
    read = [r for r in log if "passes_read" in r]
    assert [r["step"] for r in read] == [12] and "loss" in read[0]
    last = read[0]
    assert last["passes_read"] == pytest.approx(0.5) and last["passes_read_by_source"]["web"]["passes"] == 1.0
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("passes:")]
    assert said == ["passes: the plan reads its training text 0.50 times in 12 steps, 4,500 tokens read of "
                    "a text of 7,500; by source: wikipedia 0.50, web 1.0 (weight 2)",
                    "passes: the run read its training text 0.50 times in 12 steps, 4,500 tokens read of "
                    "a text of 7,500; by source: wikipedia 0.50, web 1.0 (weight 2)"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "passes" in r.getMessage()]


def test_a_cpu_run_past_four_passes_records_them_and_does_not_warn(tiny_shards, tiny_bert_config, tiny_vocab,
                                                                   tmp_path, caplog):
    out = tmp_path / "run"   # no encode manifest: the files' rows, the text's tokens unknown
    with caplog.at_level(logging.INFO, logger="trainer"):
        assert main(base_args(tiny_shards, tiny_bert_config, out, vocab=tiny_vocab, max_steps=240,
                              train_batch_size=8, log_every=60, checkpoint_every=240)) == 0
    planned = json.loads((out / "hparams.json").read_text())
    assert planned["passes"] == pytest.approx(240 * 8 / 384) and planned["passes_tokens"] is None
    assert read_log(out)[-1]["passes_read"] == pytest.approx(5.0)
    assert "(the text's tokens unknown: no encode manifest beside the data)" in caplog.text
    assert "teaches little" not in caplog.text   # a CPU's budget is small: no warning


def plan_of(dirs, shares, steps: int, batch: int = 8) -> RunPlan:
    phases = [RunPhase(i, str(d), share, 32, 5, batch, None, 1e-3, shards=find_shards(d))
              for i, (d, share) in enumerate(zip(dirs, shares))]
    config = SimpleNamespace(max_steps=steps, lr_schedule="linear", warmup_proportion=0.1, decay_proportion=0.1,
                             learning_rate=1e-3, phases=[{}] * len(phases) if len(phases) > 1 else None)
    return RunPlan(phases, config)


def test_phases_add_up_and_a_budget_past_four_passes_is_told_what_it_wants(tmp_path):
    short = encoded(make_shard_dir(tmp_path / "a", sizes=(100,)), rows=100, tokens=3000)
    long = encoded(make_shard_dir(tmp_path / "b", sizes=(25,)), rows=25, tokens=3000)
    plan = plan_of([short, long], [0.75, 0.25], steps=100)     # 75 and 25 steps of 8 rows
    passes = count_passes(plan, world_size=2)
    assert [p.passes for p in passes.phases] == [75 * 16 / 100, 25 * 16 / 25]
    assert passes.total == pytest.approx(28.0) and passes.tokens_read == 84_000
    assert "28.0 times (phase 1 12.0, phase 2 16.0) in 100 steps" in passes.line()
    warning = passes.warning()
    assert warning.startswith(f"warning: the run reads its text 28.0 times; past about {MAX_PASSES} passes")
    assert "its 84,000 tokens want 21,000 tokens of text for 4 passes (18,000 more than the 3,000 here)" in warning
    assert "CORPORA=fineweb-2" in warning and "about 14% of these steps" in warning
    # the run's end at step 50: phase 1's 50 steps only
    assert count_passes(plan, world_size=2, up_to=50).total == pytest.approx(8.0)
    assert count_passes(plan_of([short], [1.0], steps=10), world_size=1).warning() is None


def test_a_weight_below_one_reads_that_share_of_a_source(tmp_path):
    folder = encoded(make_shard_dir(tmp_path / "a", sizes=(100,)), rows=100, tokens=1000,
                     sources={"wikipedia": (800, 1.0), "web": (200, 0.5)})   # web: 400 tokens, half kept
    passes = count_passes(plan_of([folder], [1.0], steps=50), world_size=1)   # 400 rows: 4 passes
    assert passes.by_source() == {"wikipedia": 4.0, "web": 2.0} and passes.text_tokens == 1200
    assert passes.most == 4.0 and passes.warning() is None


def test_languages_count_by_their_sampling_share(tmp_path):
    hr = encoded(make_shard_dir(tmp_path / "hr", sizes=(300,), lang="hr"), rows=300, tokens=9000)
    bs = make_shard_dir(tmp_path / "bs", sizes=(100,), lang="bs")        # no manifest: its rows
    plan = plan_of([hr], [1.0], steps=100)                              # 800 rows read
    facts = {"hr": {"input_dir": str(hr), "train_samples": 300, "sampling_shares": [0.6, 0.7]},
             "bs": {"input_dir": str(bs), "train_samples": 100, "sampling_shares": [0.4, 0.3]}}
    passes = count_passes(plan, 1, languages=facts, sampling=[(0.3, 0), (0.7, 50)])
    assert passes.by_source() == pytest.approx({"hr": 800 * 0.65 / 300, "bs": 800 * 0.35 / 100})
    assert passes.most == pytest.approx(2.8) and passes.tokens_read is None
    assert "by language: hr 1.7, bs 2.8" in passes.line()
