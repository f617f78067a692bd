"""The plan of a run's steps: the sequence-length phases it goes through (where each starts), where
it ends, and the learning-rate multiplier at every step: one schedule over all the phases.

    plan = RunPlan(phases, config)                  # starts from the phases' shares of max_steps
    plan = RunPlan(phases, config, starts=[0, 120, 180], end=200)   # the budget's plan
    plan.phase_at(step)       # the phase that trains the step after `step` (0-based index)
    plan.lr_factor(step)      # LambdaLR's multiplier of --learning_rate (the phase's own peak)
    plan.replan(step, starts, end, why)             # the budget moved the end (pacing.py)
    state = plan.state_dict(); plan.load_state_dict(state)       # in every checkpoint

A run without --phases is one phase: its --input_dir, batch and rate, and the multiplier is
exactly the --lr_schedule's (trainer/schedule/optim.py). Phase k trains the steps after starts[k] up to
and including starts[k + 1] (counted as the loop counts them: `step` steps done); a checkpoint
is written at every phase's end, so a run killed at a boundary resumes into the next phase with
a fresh loader. The schedule's warmup is at the start of the first phase, its decay at the end
of the last; each phase's `learning_rate` scales the peak while it trains. A re-plan changes only
the future: the starts of phases not begun and the end (the decay moves with it: LrShape).
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from trainer.errors import TrainError
from trainer.schedule.optim import LrShape

THETA_NAMES = {"rope_theta": "θ", "global_rope_theta": "global θ", "local_rope_theta": "local θ"}


@dataclass(frozen=True)
class RunPhase:
    """One phase, every setting resolved, with its data (not JSON: `record()` is)."""
    index: int
    input_dir: object            # a folder (or {code: folder} for several languages without phases)
    share: float
    seq_len: int
    max_pred: int
    train_batch_size: int
    mlm_probability: float | None   # None: the static masks of the HDF5
    learning_rate: float
    thetas: dict = field(default_factory=dict)   # the RoPE θ while it trains (all the family's keys)
    shards: object = None        # trainer.data.shards.Shards
    masker: object = None        # its dynamic masker, or None
    eval_batch_size: int = 0     # its evaluation's batch (--eval_batch_size, else its own batch)
    gradient_accumulation_steps: int = 1   # its micro-steps a step (--gradient_accumulation_steps,
                                           # or from --tokens_per_step: trainer/config/step_size.py)
    tokens_per_step: int | None = None     # --tokens_per_step: the tokens of its steps (all ranks)

    def record(self) -> dict:
        """What hparams.json, train_log.jsonl and the model card say of the phase."""
        return {"phase": self.index + 1, "input_dir": self.input_dir, "share": self.share,
                "seq_len": self.seq_len, "max_pred": self.max_pred,
                "train_batch_size": self.train_batch_size, "mlm_probability": self.mlm_probability,
                "learning_rate": self.learning_rate, **self.thetas,
                **({"gradient_accumulation_steps": self.gradient_accumulation_steps,
                    "tokens_per_step": self.tokens_per_step} if self.tokens_per_step else {})}

    @property
    def rows(self) -> int:
        """Rows a rank an optimizer step."""
        return self.train_batch_size * self.gradient_accumulation_steps

    def line(self) -> str:
        """Its settings in words, for the log line at its start."""
        mlm = f"mlm {self.mlm_probability:g}" if self.mlm_probability is not None else "static masks"
        thetas = "".join(f", {THETA_NAMES.get(k, k)} {v:g}" for k, v in self.thetas.items())
        accum = f" x {self.gradient_accumulation_steps}" if self.tokens_per_step else ""
        return (f"seq_len {self.seq_len}, batch {self.train_batch_size}{accum} a rank, {mlm}, "
                f"lr {self.learning_rate:g}{thetas}; input_dir {self.input_dir}")


# A budget re-plans whenever its forecast is off by more than 10% of the time left, so on a loaded
# machine nearly every re-plan moved the end by more than 5% (issue 60: 11 lines of 14 re-plans in
# a 5-minute run). A re-plan is a log line only when it moved the end by more than REPLAN_LOG_SHARE
# from the end the last line said and a REPLAN_LOG_GAP of the budget has passed on its clock since
# that line (the first is free): at most 5 lines a run, each saying the re-plans since the last.
REPLAN_LOG_SHARE = 0.05
REPLAN_LOG_GAP = 0.25


def share_starts(shares, max_steps: int) -> list[int]:
    """Each phase's first step: floor(the shares before it x max_steps); every phase >= 1 step."""
    starts, cum = [], 0.0
    for share in shares:
        starts.append(math.floor(cum * max_steps + 1e-9))
        cum += share
    if any(b <= a for a, b in zip(starts, starts[1:] + [max_steps])):
        raise TrainError(f"--max_steps {max_steps} leaves a phase without a step (shares "
                         f"{', '.join(f'{s:g}' for s in shares)}): raise --max_steps or the small shares")
    return starts


class RunPlan:
    """See the module docstring. `config`: the run's TrainConfig (schedule, peak lr, max_steps)."""

    def __init__(self, phases: list[RunPhase], config, starts: list[int] | None = None,
                 end: int | None = None):
        self.phases = list(phases)
        end = config.max_steps if end is None else int(end)
        self.starts = list(starts) if starts is not None else share_starts(
            [p.share for p in self.phases], end)
        self.max_steps = end   # as planned at the start (hparams.json, checkpoints, the languages'
        # sampling schedule); a re-plan moves `end`, not this
        self.shape = LrShape(config.lr_schedule, config.warmup_proportion * end, end,
                             config.decay_proportion)
        self.scales = [p.learning_rate / config.learning_rate for p in self.phases]
        self.replans: list[dict] = []
        self.logged_end = end   # the end the log last said (replan: a small move is no line)
        self.logged_at: tuple[float, int] | None = None   # that line's (budget clock, step)
        self.lines = 0          # re-plans logged
        self.phased = config.phases is not None   # a run of --phases (else one implicit phase)

    @property
    def end(self) -> int:
        return self.shape.end

    def phase_at(self, step: int) -> int:
        """The phase that trains step `step` + 1."""
        return max(0, bisect.bisect_right(self.starts, step) - 1)

    def phase_end(self, k: int) -> int:
        return self.starts[k + 1] if k + 1 < len(self.starts) else self.end

    def is_phase_end(self, step: int) -> bool:
        return step in self.starts[1:] or step == self.end

    def lr_factor(self, step: int) -> float:
        scale = self.scales[self.phase_at(step)]
        return self.shape(step) if scale == 1.0 else self.shape(step) * scale

    def phase_start(self, k: int) -> tuple[str, dict]:
        """The log line and the train_log.jsonl record of phase k's start."""
        p, first = self.phases[k], self.starts[k] + 1
        return (f"phase {k + 1} of {len(self.phases)} from step {first} to {self.phase_end(k)}: {p.line()}",
                {"phase_start": k + 1, **p.record(), "last_step": self.phase_end(k)})

    def replan(self, step: int, starts: list[int], end: int, record: dict) -> str:
        """From step `step` on: the phases not begun start at `starts`, the run ends at `end`;
        `record`: the budget's reasons (trainer/runtime/pacing.py). Returns the log line, or ""
        (REPLAN_LOG_SHARE, REPLAN_LOG_GAP: at most 5 lines a run; train_log.jsonl records every
        re-plan, the budget's last line counts them).
        The phases begun are those up to the one that trained step `step`: at a phase's last
        step the next one has trained nothing yet, so its start may still move (the current
        phase goes on)."""
        k = self.phase_at(step - 1) if step else 0
        assert starts[:k + 1] == self.starts[:k + 1] and end > step, (step, starts, self.starts, end)
        self.starts = list(starts)
        self.shape.replan(step, end)
        self.replans.append({"step": step, "end": end, "starts": list(starts), **record})
        at_s, since_step = self.logged_at or (None, 0)
        if abs(end - self.logged_end) <= REPLAN_LOG_SHARE * self.logged_end or (
                at_s is not None and record["elapsed_s"] - at_s < REPLAN_LOG_GAP * record["budget_s"]):
            return ""
        ends = [r["end"] for r in self.replans if r["step"] > since_step]
        before, self.logged_end, self.logged_at = self.logged_end, end, (record["elapsed_s"], step)
        self.lines += 1
        phases = f", phases from steps {', '.join(map(str, starts))}" if self.phased else ""
        since = (f" ({len(ends)} re-plans since {f'step {since_step}' if since_step else 'the start'}, "
                 f"the end between {min(ends)} and {max(ends)})" if len(ends) > 1 else "")
        return (f"step {step}: --train_budget re-planned at {record['elapsed_s']:.1f} s of "
                f"{record['budget_s']:.0f} s{since}: {record['pace_s']:.3f} s a step measured "
                f"({record['timed_pace_s']:.3f} timed), the run would end at {record['forecast_s']:.0f} s; "
                f"max_steps {before} -> {end}{phases}")

    def decays_after(self, step: int) -> bool:
        """True when the schedule's next step (`step` + 1, its lr already set) is the first whose lr
        decays: the state after `step` steps is the last of the stable phase (wsd's), the checkpoint
        --extend continues from."""
        shape = self.shape
        return (shape.kind == "wsd" and step < self.end and step >= shape.warmup and step >= shape.anchor
                and shape(step) < 1.0)

    def extend(self, step: int, end: int, starts: list[int] | None = None) -> str:
        """--extend from step `step` (in the stable phase) to `end`: the decay at the new end
        (LrShape.extend), the phases not begun at `starts` (default: the shares of the new end,
        after the ones begun). Returns the log line; the change is a re-plan record too."""
        before = self.end
        if end <= before:
            raise TrainError(f"--extend: the run was planned for {before} steps; {end} is not more: give "
                             "the total you want (more steps or a longer --train_budget)")
        k = self.phase_at(step)
        if starts is None:
            later = share_starts([p.share for p in self.phases], end)[k + 1:]
            starts = self.starts[:k + 1] + [max(s, step + 1 + i) for i, s in enumerate(later)]
        assert starts[:k + 1] == self.starts[:k + 1], (starts, self.starts)
        self.starts = list(starts)
        self.shape.extend(step, end)
        self.replans.append({"step": step, "end": end, "starts": list(starts), "extended_from": before})
        self.logged_end = end
        phases = f", phases from steps {', '.join(map(str, starts))}" if self.phased else ""
        return (f"--extend: continued from step {step}, before the decay, of a run planned for {before} "
                f"steps: it now ends at step {end}, the decay over its last {self.shape.span:.0f} "
                f"steps{phases}")

    def replan_words(self) -> str:
        """The re-plans in the budget's last line: '14 re-plans (2 logged, every one in
        train_log.jsonl): max_steps 318 -> 202'."""
        n = len(self.replans)
        return (f"{n} re-plan{'' if n == 1 else 's'}" + (f" ({self.lines} logged, every one in train_log.jsonl): "
                f"max_steps {self.max_steps} -> {self.end}" if n else ""))

    def steps(self) -> list[dict]:
        """Each phase's record with its planned first and last step (hparams.json)."""
        return [{**p.record(), "first_step": self.starts[p.index] + 1, "last_step": self.phase_end(p.index)}
                for p in self.phases]

    # -- checkpoints -------------------------------------------------------------------------
    def identity(self) -> list[dict]:
        """What a resume may not change of the phases. A step in tokens may be split otherwise
        (another card's micro-batch): its rows a rank a step are what must stay."""
        return [{k: v for k, v in p.record().items()
                 if k not in ("max_pred", "input_dir", "gradient_accumulation_steps")}
                | {"input_dir": str(p.input_dir)} | ({"train_batch_size": p.rows} if p.tokens_per_step else {})
                for p in self.phases]

    def state_dict(self) -> dict:
        return {"starts": list(self.starts), "shape": self.shape.state_dict(), "phased": self.phased,
                "replans": [dict(r) for r in self.replans], "phases": self.identity()}

    def load_state_dict(self, state: dict, exact: bool = False) -> str | None:
        """A checkpoint's plan; its phases must be this run's (one line otherwise). A run of one
        phase resumed with another --max_steps (and no budget) keeps this run's plan, as the
        schedule followed --max_steps before plans were checkpointed: returns the log line.
        `exact` (--extend): the checkpoint's plan as it was, whatever --max_steps says now."""
        if state["phased"] != self.phased:
            raise TrainError("the checkpoint was written by a run " + ("of --phases" if state["phased"] else
                             "without --phases") + ": resume it " + ("with the same --phases" if state["phased"]
                             else "with its --input_dir") + ", or start a new --output_dir")
        if self.phased and state["phases"] != self.identity():
            def said(phases):
                return "; ".join(f"{p['input_dir']} share {p['share']:.3g}" for p in phases)
            raise TrainError(f"the phases changed since the checkpoint ({said(state['phases'])} then; "
                             f"{said(self.identity())} now): resume with the same --phases, or start "
                             "a new --output_dir")
        planned, now = state["shape"]["end"], self.shape.end
        if not exact and not state["replans"] and planned != now:   # --max_steps changed (a budget's plan is its own)
            if self.phased:
                raise TrainError(f"the checkpoint's phases were planned for --max_steps {planned}, not "
                                 f"{now}: resume with --max_steps {planned}, or start a new --output_dir")
            return (f"--max_steps {now} is not the {planned} the checkpoint was planned for: the "
                    f"schedule is now planned for {now} steps")
        self.starts = list(state["starts"])
        self.shape.load_state_dict(state["shape"])
        self.replans = [dict(r) for r in state["replans"]]
        return None
