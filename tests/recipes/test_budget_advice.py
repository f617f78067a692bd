"""recipes/budget_advice.py: the line before a CPU run whose budget is under what was measured to
get a model past word frequencies, and the closing line's budget from the run's own pace (the
budget's record in train_log.jsonl, as the trainer writes it)."""
from __future__ import annotations

import json

from common.make_vars import VIA_MAKE_ENV
from recipes.budget_advice import advised_budget, longer_budget_line, run_pace, short_budget_warning, with_budget
from recipes.pretrain_advice import typed_command


def write_log(run, step: int, spent: float) -> None:
    run.mkdir(parents=True, exist_ok=True)
    records = [{"step": step, "loss": 7.0}, {"step": step, "eval_mlm_acc": 0.13, "eval_loss": 7.0},
               {"step": step, "budget_s": 300.0, "budget_spent_s": spent, "budget_replans": 14}]
    (run / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + '{"step": 3, "lo',
                                         encoding="utf-8")   # a torn last line is no record


def test_the_closing_budget_comes_from_this_runs_pace(tmp_path, monkeypatch):
    """Issue 60: 101 steps in 446 s at 1.0x; at that pace 400 steps take 1,766 s: BUDGET=30m, said
    as make's command that reruns the run with it."""
    monkeypatch.setenv(VIA_MAKE_ENV, "1")
    run = tmp_path / "uk_modern"
    write_log(run, 101, 446.0)
    assert run_pace(run) == (101, 446.0)
    line = longer_budget_line(run, ["--lang", "uk", "--dump", "uk.xml.xz", "--budget", "5m"])
    assert line.startswith("   train longer: about 400 steps get make pretrain's model past word frequencies")
    assert "this run trained 101 in 446 s (4.42 s a step here), so BUDGET=30m trains about 400" in line
    assert "`make pretrain LANG=uk DUMP=uk.xml.xz`" in line   # 30m is make's default BUDGET
    write_log(run, 202, 296.9)
    assert "BUDGET=10m trains about 400: `make pretrain LANG=uk DUMP=uk.xml.xz BUDGET=10m`" in \
        longer_budget_line(run, ["--lang", "uk", "--dump", "uk.xml.xz", "--budget=5m"])
    # a run past 400 steps still at word frequencies: twice its steps
    write_log(run, 694, 300.0)
    assert "so BUDGET=10m trains about 1388" in longer_budget_line(run, ["--lang", "uk"])
    monkeypatch.delenv(VIA_MAKE_ENV)
    assert f"`{typed_command()} --lang uk --budget 10m`" in longer_budget_line(run, ["--lang", "uk"])
    assert longer_budget_line(tmp_path / "none", ["--lang", "uk"]) == ""   # no pace, no line


def test_budgets_are_rounded_up_to_what_the_trainer_reads():
    assert [advised_budget(s) for s in (1, 588, 1766, 1801, 3700, 7000, 7300)] == [
        "1m", "10m", "30m", "35m", "1.5h", "2h", "2.5h"]
    assert with_budget(["--lang", "uk", "--budget", "5m", "--long"], "1h") == [
        "--lang", "uk", "--long", "--budget", "1h"]


def test_the_warning_before_a_run_is_for_a_short_cpu_budget_only():
    line = short_budget_warning("cpu", "5m")
    assert line.startswith("warning: --budget 5m on a CPU: the model needs about 400 steps to get past word "
                           "frequencies")
    assert "1.0x-1.5x the unigram baseline at 5m" in line and "give --budget 15m or more" in line
    assert short_budget_warning("cpu", "15m") == short_budget_warning("cuda", "5m") == ""
    assert short_budget_warning("cpu", "5 minutes") == ""   # the trainer's own error says it
