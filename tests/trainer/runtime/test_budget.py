"""--train_budget and --lr_schedule: budgets parsed or refused, the schedules' shapes, and a
killed + resumed budget run that gives the losses of an uninterrupted run of its max_steps."""
from __future__ import annotations

import json
import types

import pytest
import torch

from tests.helpers.trainer_cli import assert_same_run, base_args, read_log
from trainer.run_pretraining import main
from trainer.runtime.budget import BudgetError, parse_budget, steps_for_budget
from trainer.schedule.optim import build_scheduler

pytestmark = pytest.mark.usefixtures("one_thread")


def test_budgets_parse_and_bad_ones_are_refused():
    assert parse_budget("30m") == 1800 and parse_budget("2h") == 7200 and parse_budget("1d") == 86400
    assert parse_budget("1.5h") == 5400 and parse_budget("90s") == 90
    for bad in ("", "2", "h", "-1h", "0m", "2 weeks", "1w"):
        with pytest.raises(BudgetError, match="cannot be read"):
            parse_budget(bad)
    assert steps_for_budget(100.0, 0.0, 1.0) < 100 and steps_for_budget(1.0, 5.0, 1.0) == 1


def lrs(kind, steps=20, **kw):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = build_scheduler(opt, 0.1, steps, kind=kind, **kw)
    out = []
    for _ in range(steps + 1):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def test_schedules_warm_up_then_decay_to_zero_as_named():
    poly, linear, wsd = lrs("poly"), lrs("linear"), lrs("wsd", decay_proportion=0.25)
    for s in (poly, linear, wsd):
        assert s[0] == 0 and s[1] == pytest.approx(0.5) and s[2] == 1.0 and s[20] == 0.0
    assert wsd[2:16] == [1.0] * 14 and wsd[16] < 1.0 and wsd[18] == pytest.approx(0.4)
    assert linear[11] == pytest.approx(0.5) and poly[11] == pytest.approx(0.5 ** 0.5)


@pytest.mark.slow
def test_a_killed_and_resumed_budget_run_gives_the_losses_of_its_max_steps(
        tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    """The first plan kept (--no-budget_replan): the losses of a run of its max_steps."""
    kw = dict(train_budget="2s", checkpoint_every=1000, log_every=1, lr_schedule="wsd",
              warmup_proportion=0.1, max_steps=1, budget_replan=False)
    import torch._dynamo  # noqa: F401  torch's first weight init imports it (2-7 s): not on the 2 s clock
    parts, straight = tmp_path / "parts", tmp_path / "straight"
    assert main(base_args(tiny_shards, tiny_bert_config, parts, vocab=tiny_vocab, steps_this_run=8,
                          **{**kw, "checkpoint_every": 4})) == 0
    max_steps = json.loads((parts / "hparams.json").read_text())["max_steps"]
    assert max_steps > 8       # fixed from the timed steps, not the --max_steps given
    ckpt = parts / "checkpoints" / "ckpt_00000008"
    assert json.loads((ckpt / "meta.json").read_text())["max_steps"] == max_steps
    ckpt.rename(parts / "checkpoints" / ".tmp_ckpt_00000008")   # killed while saving step 8
    assert main(base_args(tiny_shards, tiny_bert_config, parts, vocab=tiny_vocab,
                          resume_from_checkpoint=True, **kw)) == 0
    assert read_log(parts)[-1]["step"] == max_steps and "budget_spent_s" in read_log(parts)[-1]
    assert main(base_args(tiny_shards, tiny_bert_config, straight, vocab=tiny_vocab,
                          **{**kw, "train_budget": None, "max_steps": max_steps})) == 0
    assert_same_run(straight, parts, max_steps)


@pytest.mark.slow
def test_two_ranks_agree_on_the_budget_steps(tiny_shards, tiny_vocab, tmp_path):
    """Each rank times and fixes max_steps; were they to differ, one rank would wait for the
    other's all-reduce and the run would not end. ModernBERT, packed-style flags, wsd."""
    import subprocess
    import sys

    from tests.helpers.trainer_cli import ROOT, SCRIPT, env

    cfg = tmp_path / "m.json"
    cfg.write_text(json.dumps({"vocab_size": 200, "hidden_size": 32, "num_hidden_layers": 2,
                               "num_attention_heads": 2, "intermediate_size": 48,
                               "max_position_embeddings": 64}))
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(SCRIPT), *base_args(tiny_shards, cfg, out, vocab=tiny_vocab, train_budget="8s",
                                   model_type="modernbert", no_nsp=True, lr_schedule="wsd",
                                   log_every=10, checkpoint_every=1000)]
    res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    print(res.stderr)
    end = json.loads((out / "checkpoints" / f"ckpt_{read_log(out)[-1]['step']:08d}" / "meta.json").read_text())
    assert read_log(out)[-1]["step"] == end["end_step"] > 1   # the plan's end, re-planned or not
    assert res.stderr.count("--train_budget 8s: ") == 2   # logged by rank 0 only: the plan, the end


def slowed_run(shards, cfg, vocab, out, budget_s: int, replan: bool) -> dict:
    """A budget run whose steps slow down after 3 s (tests/trainer/slowed_run_pretraining.py:
    every batch then waits 20 ms more: two or three times slower); its budget record (the trainer's own clock)."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.helpers.trainer_cli import ROOT, env

    entry = Path(__file__).parents[1] / "slowed_run_pretraining.py"
    argv = base_args(shards, cfg, out, vocab=vocab, train_budget=f"{budget_s}s", lr_schedule="wsd",
                     log_every=50, checkpoint_every=100_000, eval_every=100_000, max_steps=1,
                     budget_replan=replan)
    res = subprocess.run([sys.executable, str(entry), *argv], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env=env(SLOW_AFTER_S="3", SLOW_SLEEP_S="0.02"))
    assert res.returncode == 0, res.stderr[-3000:]
    record = read_log(out)[-1]
    assert "budget_spent_s" in record, record
    return {**record, "log": res.stderr}


@pytest.mark.slow
def test_a_run_whose_pace_drops_mid_run_ends_within_5_percent_of_its_budget(
        tiny_shards, tiny_bert_config, tiny_vocab, tmp_path):
    """The same slowed run with the first plan kept (today's --train_budget before it re-planned)
    runs far over; re-planned, it ends within 5% of the budget, its final evaluation included."""
    budget = 12
    kept = slowed_run(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path / "kept", budget, replan=False)
    assert kept["budget_spent_s"] > 1.05 * budget and kept["budget_replans"] == 0, kept
    replanned = slowed_run(tiny_shards, tiny_bert_config, tiny_vocab, tmp_path / "replanned", budget, replan=True)
    assert abs(replanned["budget_spent_s"] - budget) <= 0.05 * budget, replanned["log"][-4000:]
    assert replanned["budget_replans"] >= 1 and "re-planned at" in replanned["log"]
    # issue 60: a few lines however often it re-plans, every re-plan a train_log.jsonl record
    lines = replanned["log"].count("--train_budget re-planned at")
    records = [r for r in read_log(tmp_path / "replanned") if "replan_end" in r]
    assert 1 <= lines <= 5 and len(records) == replanned["budget_replans"], (lines, len(records))
    assert f"{len(records)} re-plan{'s' if len(records) > 1 else ''} ({lines} logged, every one in train_log.jsonl)" \
        in replanned["log"]


class CompilingForward:
    """A forward whose first `compiling` calls stand for torch.compile's first steps (a static
    graph, then a dynamic one, ...): each counts a compiled frame in Dynamo's counters and takes
    `compile_s` on the fake clock; the others take `step_s`."""

    def __init__(self, clock, compiling: int, compile_s: float = 5.0, step_s: float = 0.1):
        self.clock, self.compiling, self.compile_s, self.step_s, self.calls = clock, compiling, compile_s, step_s, 0

    def __call__(self, model, batch):
        from torch._dynamo.utils import counters

        self.calls += 1
        if self.calls <= self.compiling:
            counters["frames"]["total"] += 1
            self.clock.now += self.compile_s
        else:
            self.clock.now += self.step_s
        return types.SimpleNamespace(loss=model(batch["x"]).sum())


@pytest.mark.parametrize(("compiling", "warm"), [(0, 1), (1, 1), (3, 2), (40, 8)])
def test_the_budget_times_steps_after_compilation_has_settled(compiling, warm, monkeypatch):
    """Untimed warm-up steps until one compiles nothing (at least one), then the timed steps:
    the compiles' seconds never reach the pace (the first plan on an H200 was off 1.6x)."""
    from tests.helpers.fake_clock import Clock
    from trainer.runtime import budget

    clock = Clock()
    monkeypatch.setattr(budget.time, "perf_counter", clock)
    env = types.SimpleNamespace(world_size=1, device=torch.device("cpu"), barrier=lambda: None)
    model = torch.nn.Linear(2, 1)
    forward = CompilingForward(clock, compiling)
    batches = iter(lambda: {"x": torch.ones(1, 2)}, None)
    weights = [p.detach().clone() for p in model.parameters()]
    step_s = budget.time_steps(model, batches, 2, env, forward)
    # warm-up: one step, and more while the last one compiled (2 micro-batches a step), at most
    # WARMUP_STEPS; then TIMED_STEPS steps; a compile past the warm-up is timed (40: it never settles)
    assert forward.calls == 2 * (warm + budget.TIMED_STEPS)
    if compiling < 2 * budget.WARMUP_STEPS:
        assert step_s == pytest.approx(2 * forward.step_s)
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(a, b) for a, b in zip(weights, model.parameters()))
