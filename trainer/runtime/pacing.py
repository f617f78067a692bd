"""--train_budget that keeps time: the budget's clock, the measured pace, and the re-plan when the
pace drifts from the plan (a shared machine whose load changes, a neighbour on the node).

    steps = plan_steps(step, phase, starts, elapsed, paces, shares, start_s, end_s)   # (starts, end)
    pacer = Pacer(budget_s, started, ...)        # runtime/budget.py makes it from timed steps
    with pacer.aside("eval"): ...                # time not spent on steps (evals, checkpoints)
    change = pacer.check(step, phase, starts, end, env)   # every `check_every` steps: None or
                                                          # (starts, end, record) to re-plan with

The plan is a pure function of what a checkpoint holds (the starts and end of the phases, the
schedule: trainer/schedule/plan.py), so a resume continues it exactly; what the clock measures only
decides when to change it, and every change is one log line, a train_log.jsonl record and part
of the next checkpoint. The arithmetic (plan_steps, forecast):

- The time from the plan's start to `end_s` (the budget less END_RESERVE and the final
  evaluation and checkpoint, timed and reserved) is the phases' by their shares: a phase that
  begins at time s takes its share of the time left (end_s - s) among itself and the phases
  after it (so a phase that ran late leaves the later ones their ratios).
- The current phase gets the steps that fit before its end at its measured pace; the phases
  after it share what is left after it by their shares, each at its timed pace scaled by the
  drift of the current phase (measured / timed); every phase at least one step.
- A pace is seconds a step with the evaluations and checkpoints spread over the steps (their
  measured time / --eval_every, / --checkpoint_every); the pace of the steps is the slowest
  rank's over the last WINDOWS check windows of the current phase (not its first window: a new
  loader's first reads, a new process's first steps).
- Every `check_every` steps (about CHECKS checks a run) the current plan's finish and its phase's
  end are forecast; off by more than TOLERANCE of the budget plus DRIFT of the time left (a
  pace measured over a few windows is noisy: early on only a real drift re-plans, near the end
  the landing is fine), the run is re-planned (the loop moves the end, and with wsd the decay's
  start: trainer/schedule/optim.py's LrShape).

Every input is reduced over the ranks first (the slowest rank's times), so all ranks take the
same decision. The clock survives a resume: the time spent is saved with the plan (the time
between the last checkpoint and a kill is lost to it).
"""
from __future__ import annotations

import contextlib
import math
import time

import torch

CHECKS = 100          # pace checks over a run: every 1% of its first plan's steps
WINDOWS = 4           # the pace: the mean over the last 4 check windows (of the current phase)
TOLERANCE = 0.005     # of the budget, plus
DRIFT = 0.10          # of the time left: a forecast further off than both re-plans


def phase_target(phase: int, shares: list[float], phase_start_s: float, end_s: float) -> float:
    """When phase `phase`, begun at `phase_start_s` on the clock, should end: its share of the
    time left to `end_s` among itself and the phases after it."""
    rest = sum(shares[phase:])
    return end_s if phase == len(shares) - 1 else phase_start_s + shares[phase] / rest * (end_s - phase_start_s)


def _steps(seconds: float, pace: float) -> int:
    """The whole steps nearest to `seconds` at `pace` (a long step may end half a step late or
    early, not a whole one early), at least 0."""
    return max(0, math.floor(seconds / pace + 0.5))


def plan_steps(step: int, phase: int, starts: list[int], elapsed: float, paces: list[float],
               shares: list[float], phase_start_s: float, end_s: float) -> tuple[list[int], int]:
    """(starts, end): the phases' first steps and the last step that fill the time to `end_s`,
    from step `step` of phase `phase` (begun at `phase_start_s` on the clock) at the clock's
    `elapsed` (see the module docstring). `paces`: each phase's seconds a step; `starts`: the
    phases begun so far (kept)."""
    target = phase_target(phase, shares, phase_start_s, end_s)
    least = 1 if step == starts[phase] else 0   # a phase begun trains at least one step
    left = max(least, _steps(target - elapsed, paces[phase]))
    new_starts, t, clock = list(starts[:phase + 1]), step + left, elapsed + left * paces[phase]
    for j in range(phase + 1, len(shares)):   # the phases after it share the time left after it
        n = max(1, _steps(phase_target(j, shares, clock, end_s) - clock, paces[j]))
        new_starts.append(t)
        t, clock = t + n, clock + n * paces[j]
    return new_starts, max(t, step + 1)


def forecast(step: int, phase: int, starts: list[int], end: int, elapsed: float,
             paces: list[float]) -> tuple[float, float]:
    """(when the plan ends, when its current phase ends) on the clock, at `paces`."""
    ends = list(starts[1:]) + [end]
    phase_end = elapsed + max(0, ends[phase] - step) * paces[phase]
    finish = phase_end + sum((ends[j] - starts[j]) * paces[j] for j in range(phase + 1, len(starts)))
    return finish, phase_end


def reduce_max(env, values: list[float]) -> list[float]:
    """The largest of every value over the ranks (the slowest rank's times)."""
    if env.world_size == 1:
        return list(values)
    import torch.distributed as dist

    t = torch.tensor(values, dtype=torch.float64, device=env.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.cpu().tolist()


class Pacer:
    """The budget's clock, the pace of the steps, and the re-plan decision (module docstring).

    `timed`: each phase's timed seconds a step (trainer/runtime/budget.py); `eval_s`: each phase's
    evaluation time, estimated until measured; `every`: (--eval_every or 0, --checkpoint_every)."""

    def __init__(self, budget_s: float, started: float, timed: list[float], eval_s: list[float],
                 shares: list[float], every: tuple[int, int], start_s: float, check_every: int,
                 end_reserve: float, replan: bool = True):
        self.budget_s, self.started = float(budget_s), started
        self.timed, self.eval_s, self.shares = list(timed), list(eval_s), list(shares)
        self.eval_every, self.checkpoint_every = every
        self.start_s, self.check_every = float(start_s), int(check_every)
        self.end_reserve, self.replan = float(end_reserve), replan
        self.phase_start_s = self.start_s   # when the current phase began on the clock
        self.spent_before = 0.0     # the clock of the runs before a resume
        self.ckpt_s = 0.0           # the last checkpoint's time (0 until one is written)
        self._windows: list[tuple[float, int]] = []
        self._mark = (time.monotonic(), 0, 0.0)   # window start: (clock, step, time aside)
        self._aside = 0.0
        self._phase = 0

    # -- the clock -----------------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.spent_before + time.monotonic() - self.started

    @contextlib.contextmanager
    def aside(self, what: str):
        """Time spent on `what` ("eval", "checkpoint") instead of steps: out of the pace,
        measured for the forecast."""
        t0 = time.monotonic()
        try:
            yield
        finally:
            dt = time.monotonic() - t0
            self._aside += dt
            if what == "eval":
                self.eval_s[self._phase] = dt
            else:
                self.ckpt_s = dt

    def start_window(self, step: int, phase: int, env) -> None:
        """Steps from here on are measured (the loop's start, a new phase: every rank calls it
        at the same step, and the phase's start on the clock is the slowest rank's)."""
        if phase != self._phase:
            self._windows = []
            self.phase_start_s = reduce_max(env, [self.elapsed()])[0] if self.replan else self.elapsed()
        self._phase, self._warm = phase, False
        self._mark, self._aside = (time.monotonic(), step, 0.0), 0.0

    # -- the forecast --------------------------------------------------------------------------
    def end_s(self) -> float:
        """When the steps must be done: the budget less END_RESERVE, the last phase's evaluation
        and the last checkpoint."""
        final = (self.eval_s[-1] if self.eval_every else 0.0) + self.ckpt_s
        return self.budget_s * (1.0 - self.end_reserve) - final

    def paces(self, measured: float | None, phase: int) -> list[float]:
        """Every phase's seconds a step, evaluations and checkpoints spread over the steps."""
        drift = measured / self.timed[phase] if measured else 1.0
        out = []
        for j, timed in enumerate(self.timed):
            step = measured if (j == phase and measured) else timed * drift
            over = (self.eval_s[j] / self.eval_every if self.eval_every else 0.0)
            over += self.ckpt_s / self.checkpoint_every
            out.append(step + over * (drift if j > phase else 1.0))
        return out

    def due(self, step: int) -> bool:
        return self.replan and step % self.check_every == 0

    def check(self, step: int, phase: int, starts: list[int], end: int, env):
        """At a check step: the pace measured (over the ranks), the plan forecast; None, or
        (starts, end, record) when it must change (every rank alike)."""
        now, (t0, step0, aside0) = time.monotonic(), self._mark
        window, elapsed, eval_s, ckpt_s = reduce_max(
            env, [now - t0 - (self._aside - aside0), self.elapsed(), self.eval_s[phase], self.ckpt_s])
        self.eval_s[phase], self.ckpt_s = eval_s, ckpt_s
        if step > step0 and self._warm:   # the first window (a new loader, a new process) is not
            self._windows = (self._windows + [(window, step - step0)])[-WINDOWS:]   # the pace
        self._warm = True
        self._mark, self._aside = (now, step, 0.0), 0.0
        if not self._windows:
            return None
        measured = sum(w for w, _ in self._windows) / sum(n for _, n in self._windows)
        paces, end_s = self.paces(measured, phase), self.end_s()
        finish, phase_end = forecast(step, phase, starts, end, elapsed, paces)
        target = phase_target(phase, self.shares, self.phase_start_s, end_s)
        if all(abs(at - aim) <= TOLERANCE * self.budget_s + DRIFT * max(0.0, aim - elapsed)
               for at, aim in ((finish, end_s), (phase_end, target))):
            return None
        new_starts, new_end = plan_steps(step, phase, starts, elapsed, paces, self.shares,
                                         self.phase_start_s, end_s)
        if (new_starts, new_end) == (list(starts), end):
            return None
        finish_new, _ = forecast(step, phase, new_starts, new_end, elapsed, paces)
        final = self.budget_s * (1.0 - self.end_reserve) - end_s   # the last eval and checkpoint
        return new_starts, new_end, {
            "elapsed_s": round(elapsed, 3), "pace_s": round(measured, 6),
            "timed_pace_s": round(self.timed[phase], 6), "forecast_s": round(finish + final, 3),
            "new_forecast_s": round(finish_new + final, 3), "budget_s": self.budget_s}

    def summary(self, env, budget: str, replans: int, words: str) -> tuple[str, dict]:
        """The clock at the end of the run (the slowest rank's): a log line and a record.
        `words`: the re-plans in words (trainer/schedule/plan.py's replan_words)."""
        spent = reduce_max(env, [self.elapsed()])[0]
        return (f"--train_budget {budget}: {spent:.1f} s spent of {self.budget_s:.0f} s "
                f"({spent / self.budget_s:.1%}), {words}",
                {"budget_s": self.budget_s, "budget_spent_s": spent, "budget_replans": replans})

    def extend(self, budget_s: float, step: int, phase: int, starts: list[int],
               measured: float | None = None) -> tuple[list[int], int]:
        """--extend: the budget is now `budget_s` in all (the run's total, the time spent so far
        counted in it); (starts, end) that fill it from step `step` of phase `phase`, at the pace
        the run last measured in that phase (`measured`, a re-plan's), else the timed one (the
        re-plans correct it as the run measures its pace again)."""
        self.budget_s = float(budget_s)
        new_starts, end = plan_steps(step, phase, starts, self.elapsed(), self.paces(measured, phase), self.shares,
                                     self.phase_start_s, self.end_s())
        self.check_every = max(1, (end - step) // CHECKS)
        return new_starts, end

    # -- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"budget_s": self.budget_s, "spent_s": self.elapsed(), "timed": list(self.timed),
                "eval_s": list(self.eval_s), "shares": list(self.shares), "start_s": self.start_s,
                "check_every": self.check_every, "ckpt_s": self.ckpt_s, "phase": self._phase,
                "phase_start_s": self.phase_start_s}

    def load_state_dict(self, state: dict) -> None:
        """A checkpoint's clock and timings: the time spent goes on from what it says."""
        self.spent_before = float(state["spent_s"])
        for key in ("timed", "eval_s", "shares"):
            setattr(self, key, list(state[key]))
        self.budget_s, self.start_s = float(state["budget_s"]), float(state["start_s"])
        self.check_every, self.ckpt_s = int(state["check_every"]), float(state["ckpt_s"])
        self._phase, self.phase_start_s = int(state["phase"]), float(state["phase_start_s"])
