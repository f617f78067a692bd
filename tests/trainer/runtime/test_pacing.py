"""The budget that re-plans (trainer/runtime/pacing.py): the steps that fill the time left, the
phases' shares of the time kept, the forecast, and the decision to re-plan (a fake clock)."""
from __future__ import annotations

import types

import pytest

from tests.helpers.fake_clock import Clock
from trainer.runtime import pacing
from trainer.runtime.pacing import Pacer, forecast, plan_steps

ONE_RANK = types.SimpleNamespace(world_size=1)


def test_one_phase_fills_the_time_left_at_its_pace():
    assert plan_steps(0, 0, [0], 10.0, [0.5], [1.0], 10.0, 110.0) == ([0], 200)
    # later, 40 s spent at step 100 of it: the 60 s left hold 120 more steps at 0.5 s
    assert plan_steps(100, 0, [0], 50.0, [0.5], [1.0], 10.0, 110.0) == ([0], 220)
    # twice as slow: 60 more steps
    assert plan_steps(100, 0, [0], 50.0, [1.0], [1.0], 10.0, 110.0) == ([0], 160)
    # out of time: the run still ends after the step it is at (the schedule needs a step)
    assert plan_steps(100, 0, [0], 200.0, [1.0], [1.0], 10.0, 110.0) == ([0], 101)


def test_phases_share_the_time_not_the_steps():
    """0.6 / 0.3 / 0.1 of 100 s at paces 0.1, 0.4 and 1.0 s a step: 600, 75 and 10 steps."""
    starts, end = plan_steps(0, 0, [0], 0.0, [0.1, 0.4, 1.0], [0.6, 0.3, 0.1], 0.0, 100.0)
    assert starts == [0, 600, 675] and end == 685
    paces = [0.1, 0.4, 1.0]
    finish, phase_end = forecast(0, 0, starts, end, 0.0, paces)
    assert finish == pytest.approx(100.0) and phase_end == pytest.approx(60.0)


def test_a_slower_phase_is_replanned_and_the_later_ones_keep_their_shares():
    """At step 300 of phase 1 (30 s spent as planned) its pace doubles: phase 1 ends at 60 s
    with 150 more steps instead of 300; phases 2 and 3 keep 30 s and 10 s (their paces scaled
    by the same drift)."""
    starts, end = plan_steps(300, 0, [0], 30.0, [0.2, 0.8, 2.0], [0.6, 0.3, 0.1], 0.0, 100.0)
    assert starts == [0, 450, 488] and end == 493   # 30 s / 0.8 = 37.5: 38 steps; 9.6 s / 2: 5
    finish, phase_end = forecast(300, 0, starts, end, 30.0, [0.2, 0.8, 2.0])
    assert phase_end == pytest.approx(60.0) and finish == pytest.approx(100.4)   # the nearest steps


def test_a_phase_that_ran_late_leaves_the_others_the_time_that_is_left_by_their_shares():
    """Phase 2 of 3 began at 80 s instead of 60 s: phases 2 and 3 share the 20 s left 3:1."""
    starts, end = plan_steps(600, 1, [0, 600], 80.0, [0.1, 0.4, 1.0], [0.6, 0.3, 0.1], 80.0, 100.0)
    assert starts == [0, 600, 638] and end == 643   # 15 s / 0.4 = 37.5: 38; 4.8 s / 1.0: 5


def test_every_phase_gets_at_least_one_step():
    starts, end = plan_steps(0, 0, [0], 0.0, [1.0, 100.0], [0.99, 0.01], 0.0, 10.0)
    assert starts == [0, 10] and end == 11   # even a step the time left cannot hold


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(pacing.time, "monotonic", c)
    return c


def pacer(clock, **kw):
    opts = dict(budget_s=100.0, started=clock.now, timed=[0.1], eval_s=[0.0], shares=[1.0],
                every=(0, 1000), start_s=0.0, check_every=10, end_reserve=0.0)
    return Pacer(**{**opts, **kw})


def run_steps(p, clock, plan, steps, pace, env=ONE_RANK):
    """Steps at `pace` s each, checking as the loop does; returns the re-plans' records."""
    starts, end, step, changes = plan
    for _ in range(steps):
        clock.now += pace
        step += 1
        if p.due(step):
            change = p.check(step, 0, starts, end, env)
            if change is not None:
                starts, end, record = change
                changes.append((step, end, record))
    return [starts, end, step, changes]


def test_a_steady_pace_on_plan_never_replans(clock):
    p = pacer(clock)
    p.start_window(0, 0, ONE_RANK)
    plan = run_steps(p, clock, [[0], 1000, 0, []], 500, 0.1)
    assert plan[3] == [] and plan[1] == 1000


def test_a_pace_that_doubles_moves_the_end_so_the_run_ends_on_time(clock):
    p = pacer(clock)
    p.start_window(0, 0, ONE_RANK)
    plan = run_steps(p, clock, [[0], 1000, 0, []], 300, 0.1)       # 30 s, on plan
    plan = run_steps(p, clock, plan, 100, 0.2)                      # then twice as slow
    assert plan[3], "no re-plan"
    starts, end, step, _ = plan
    clock_end = clock.now - 1000.0 + (end - step) * 0.2
    assert end < 1000 and clock_end == pytest.approx(100.0, abs=2.0)
    step, new_end, record = plan[3][0]
    assert record["pace_s"] > 0.1 and record["forecast_s"] > 100 and record["budget_s"] == 100.0


def test_noise_within_the_tolerance_does_not_replan(clock):
    p = pacer(clock)
    p.start_window(0, 0, ONE_RANK)
    plan = [[0], 1000, 0, []]
    for i in range(40):   # +-3% around the plan's pace, window by window
        plan = run_steps(p, clock, plan, 10, 0.1 * (1.03 if i % 2 else 0.97))
    assert plan[3] == []


def test_time_aside_is_not_pace_but_is_forecast(clock):
    """An evaluation every 100 steps taking 5 s is left out of the pace and spread over the steps
    (0.1 + 5 / 100 s a step), and the last one is reserved: the plan's 1000 steps become fewer."""
    p = pacer(clock, every=(100, 1000), eval_s=[0.0])
    p.start_window(0, 0, ONE_RANK)
    plan = [[0], 1000, 0, []]
    for _ in range(3):
        plan = run_steps(p, clock, plan, 100, 0.1)
        with p.aside("eval"):
            clock.now += 5.0
    assert p.eval_s == [5.0] and plan[3]
    assert plan[3][-1][2]["pace_s"] == pytest.approx(0.1)
    starts, end, step, _ = plan
    finish = clock.now - 1000.0 + (end - step) * 0.15 + 5.0   # steps, their evals, the last eval
    assert 600 < end < 700 and finish == pytest.approx(100.0, abs=4.0)


def test_the_clock_survives_a_resume(clock):
    p = pacer(clock)
    clock.now += 30.0
    state = p.state_dict()
    clock.now += 500.0                       # the process is gone; a new one starts
    q = pacer(clock, started=clock.now)
    q.load_state_dict(state)
    clock.now += 2.0
    assert q.elapsed() == pytest.approx(32.0) and q.timed == [0.1]
