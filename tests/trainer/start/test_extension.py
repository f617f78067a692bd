"""--extend: a finished warmup-stable-decay run continued to a larger total from its last
checkpoint before the decay, its decay redone at the new end and its warmup not."""
from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers.trainer_cli import assert_same_run, base_args, one_error, read_log
from trainer.checkpoint import list_checkpoints, read_meta, stable_checkpoint
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")

# warmup 2 steps, then the peak lr; the decay over the last quarter: steps 16-20 of a 20-step run
SHORT = dict(max_steps=20, lr_schedule="wsd", warmup_proportion=0.1, decay_proportion=0.25,
             checkpoint_every=4, keep_checkpoints=1, eval_every=0)


def steps(out) -> list[int]:
    return [int(p.name.split("_")[1]) for p in list_checkpoints(out)]


def test_a_run_keeps_its_checkpoint_before_the_decay(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    out = tmp_path / "short"
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, **SHORT)) == 0
    # step 16's state: its 16 steps trained at the peak (after the warmup), the 17th's lr decays
    assert steps(out) == [16, 20] and stable_checkpoint(out).name == "ckpt_00000016"
    assert read_meta(stable_checkpoint(out))["stable"] is True
    lrs = {r["step"]: r["lr"] for r in read_log(out) if "lr" in r}
    assert lrs[16] == pytest.approx(1e-2) and lrs[17] < 1e-2


@pytest.mark.slow
def test_an_extended_run_is_the_run_planned_for_its_total(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    """20 steps, then --extend to 40 (in two parts, the second started again with --extend): its
    losses, lr and weights are those of a run planned for 40 steps from the start with the same
    warmup (2 steps) and decay (the last quarter): the shared steps before the decay identical,
    nothing re-warmed, the decay at the new end."""
    short, longer, planned = tmp_path / "short", tmp_path / "longer", tmp_path / "planned"
    assert main(base_args(tiny_shards, tiny_bert_config, short, tiny_vocab, **SHORT)) == 0
    first = read_log(short)
    shutil.copytree(short, longer)
    extend = {**SHORT, "max_steps": 40, "extend": True}
    assert main(base_args(tiny_shards, tiny_bert_config, longer, tiny_vocab, steps_this_run=6, **extend)) == 0
    log = read_log(longer)
    record = next(r for r in log if "extended_from_step" in r)
    assert record["extended_from_step"] == 16 and record["planned_end"] == 20 and record["end"] == 40
    assert not (longer / "checkpoints" / "ckpt_00000020").exists()    # the old decay's end is gone
    # interrupted at step 22, started again with the same total: a resume, not a second extension
    assert main(base_args(tiny_shards, tiny_bert_config, longer, tiny_vocab, **extend)) == 0
    assert main(base_args(tiny_shards, tiny_bert_config, planned, tiny_vocab,
                          **{**SHORT, "max_steps": 40, "warmup_proportion": 0.05})) == 0
    assert_same_run(planned, longer, 40)
    lrs = {r["step"]: r["lr"] for r in read_log(longer) if "lr" in r}
    assert all(lrs[s] == pytest.approx(1e-2) for s in range(3, 32)) and lrs[40] < lrs[32] < 1e-2
    before = [r for r in first if r.get("step", 99) <= 16 and "loss" in r]
    assert before == [r for r in read_log(longer) if r.get("step", 99) <= 16 and "loss" in r]
    assert stable_checkpoint(longer).name == "ckpt_00000031"   # the new decay's, for a next --extend


def test_extend_says_in_one_line_what_it_cannot_continue(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path,
                                                          capsys):
    out = tmp_path / "short"
    one_error(capsys, base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, **SHORT, extend=True),
              "holds no checkpoint to continue")
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, **SHORT)) == 0
    one_error(capsys, base_args(tiny_shards, tiny_bert_config, out, tiny_vocab,
                                **{**SHORT, "max_steps": 12, "extend": True}), "planned for 20 steps", "not more")
    one_error(capsys, base_args(tiny_shards, tiny_bert_config, out, tiny_vocab,
                                **{**SHORT, "lr_schedule": "poly", "extend": True}), "only --lr_schedule wsd")
    # a run written before --extend kept no checkpoint before its decay
    for ckpt in list_checkpoints(out):
        meta = json.loads((ckpt / "meta.json").read_text())
        meta.pop("stable_step"), meta.pop("stable", None)
        (ckpt / "meta.json").write_text(json.dumps(meta))
    shutil.rmtree(out / "checkpoints" / "ckpt_00000016")
    one_error(capsys, base_args(tiny_shards, tiny_bert_config, out, tiny_vocab,
                                **{**SHORT, "max_steps": 40, "extend": True}),
              "kept no checkpoint from before its decay")


@pytest.mark.slow
def test_a_budget_run_extends_to_its_new_total(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path, capsys):
    """--train_budget is the run's total: 2 s, then --extend to 4 s goes on from the checkpoint
    before the decay, with the time spent counted; another budget without --extend is one line."""
    import torch._dynamo  # noqa: F401  torch's first weight init imports it (2-7 s): not on the 2 s clock

    out = tmp_path / "budget"
    kw = {**SHORT, "train_budget": "2s", "budget_replan": False, "checkpoint_every": 1000}
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, **kw)) == 0
    first = read_log(out)
    end = max(r["step"] for r in first)
    stable = stable_checkpoint(out)
    assert stable is not None and read_meta(stable)["budget_s"] == 2.0
    one_error(capsys, base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, resume_from_checkpoint=True,
                                **{**kw, "train_budget": "4s"}), "planned for --train_budget 2 s", "add --extend")
    assert main(base_args(tiny_shards, tiny_bert_config, out, tiny_vocab, **{**kw, "train_budget": "4s",
                                                                             "extend": True})) == 0
    log = read_log(out)
    record = next(r for r in log if "extended_from_step" in r)
    start = int(stable.name.split("_")[1])
    assert record["extended_from_step"] == start and record["budget_before_s"] == 2.0 and record["budget_s"] == 4.0
    assert max(r["step"] for r in log) > end and log[-1]["budget_s"] == 4.0
    assert [r for r in first if r["step"] <= start] == [r for r in log if r["step"] <= start
                                                         and "extended_from_step" not in r]
