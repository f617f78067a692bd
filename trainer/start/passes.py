"""How often a run reads its training text: its passes, counted from the plan (each phase's steps,
rows a step and ranks) and what each phase's encode folder holds of the text (the HDF5 contract's
training_text: a small JSON beside the files, no file opened).

    passes = count_passes(plan, world_size)               # the plan's (None: nothing to count by)
    passes.line(), passes.warning()                       # the log's lines; warning: past MAX_PASSES
    passes.record()                                       # hparams.json, train_log.jsonl, the card
    count_passes(plan, world_size, up_to=step).record("passes_read")   # what the run read, at its end
    hparams = announce_plan(trainer); last_record.update(announce_read(trainer))   # trainer/loop.py's

A phase's passes over the text = the rows it reads (its steps x rows a rank a step x ranks) over
its files' training rows, times their dupe factor (rows made of d copies of the text: one pass
over the files is d over the text); the run's = the sum over its phases (each phase's folder
encodes the same text at its own row length). A source's passes = the run's x its `shard
--weight` W: its documents are W times in the training files (W=2: twice a pass), or, below 1,
a share W of them is, each read once a pass (W=0.5: half its text, the mean over all of it is
half a pass). The text read most often (`most`): the run's passes x the largest weight above 1.
A run on several languages (--input_dir LANG=DIR) counts each language: its share of the rows
(the --sampling_alpha schedule's, over its steps) over its own rows.

Past MAX_PASSES (Muennighoff et al. 2023, "Scaling Data-Constrained Language Models": repeated
text loses its value fast past about 4 passes) a run on a GPU warns, with the tokens of text its
budget wants; on a CPU, where budgets are small, it only records the count.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pipeline.encoding.hdf5_format import training_text
from trainer.config.languages import parse_alpha_schedule, schedule_steps

MAX_PASSES = 4
log = logging.getLogger("trainer")


@dataclass(frozen=True)
class PhaseText:
    """One phase (or language): the rows it reads and what its files hold of the text."""
    rows_read: float
    rows: int                 # its files' training rows
    dupe_factor: int = 1
    tokens: int | None = None   # the text's tokens in its training shards (None: no encode record)

    @property
    def passes(self) -> float:
        return self.rows_read * self.dupe_factor / self.rows if self.rows else 0.0


@dataclass(frozen=True)
class Passes:
    """The run's passes; `sources`: {source: (its tokens in the training shards, its weight)},
    `languages`: {code: PhaseText} of a run on several languages."""
    phases: list[PhaseText]
    steps: int
    sources: dict = field(default_factory=dict)
    languages: dict = field(default_factory=dict)

    @property
    def total(self) -> float:
        return sum(p.passes for p in self.phases)

    @property
    def tokens_read(self) -> int | None:
        parts = list(self.languages.values()) or self.phases
        if any(p.tokens is None for p in parts):
            return None
        return round(sum(p.passes * p.tokens for p in parts))

    @property
    def text_tokens(self) -> int | None:
        """The tokens of the text itself (a source's copies counted once)."""
        if self.languages:
            known = [t.tokens for t in self.languages.values()]
            return None if None in known else sum(known)
        if self.sources:
            return round(sum(t / w for t, w in self.sources.values() if w > 0))
        return self.phases[0].tokens

    def by_source(self) -> dict[str, float]:
        if self.languages:
            return {code: t.passes for code, t in self.languages.items()}
        return {name: self.total * w for name, (_t, w) in self.sources.items()}

    @property
    def most(self) -> float:
        return max([self.total, *self.by_source().values()])

    def wanted_tokens(self) -> int | None:
        """The tokens of text this run's reads want for at most MAX_PASSES."""
        read = self.tokens_read
        return None if read is None else round(read / MAX_PASSES)

    def line(self, verb: str = "the plan reads") -> str:
        phases = (f" (phase {', phase '.join(f'{i + 1} {_n(p.passes)}' for i, p in enumerate(self.phases))})"
                  if len(self.phases) > 1 else "")
        text, read = self.text_tokens, self.tokens_read
        tokens = (f", {read:,} tokens read of a text of {text:,}" if read is not None and text else
                  " (the text's tokens unknown: no encode manifest beside the data)")
        what = "language" if self.languages else "source"
        sources = self.by_source()
        weights = {name: w for name, (_t, w) in self.sources.items()}
        each = ("; by " + what + ": " + ", ".join(
            f"{name} {_n(p)}" + (f" (weight {weights[name]:g})" if weights.get(name, 1.0) != 1.0 else "")
            for name, p in sources.items())) if len(sources) > 1 or self.languages else ""
        return (f"passes: {verb} its training text {_n(self.total)} times{phases} in {self.steps:,} "
                f"steps{tokens}{each}")

    def warning(self) -> str | None:
        """One line past MAX_PASSES: how much text the budget wants, and where to find it."""
        if self.most <= MAX_PASSES:
            return None
        wanted, text = self.wanted_tokens(), self.text_tokens
        need = (f": its {self.tokens_read:,} tokens want {wanted:,} tokens of text for {MAX_PASSES} passes"
                + (f" ({wanted - text:,} more than the {text:,} here)" if text and wanted > text else "")
                if wanted else "")
        return (f"warning: the run reads its text {_n(self.most)} times; past about {MAX_PASSES} passes "
                f"repeated text teaches little (Muennighoff et al. 2023){need}: add web text in the "
                f"language (`make pretrain CORPORA=fineweb-2`, `pipeline ingest --corpus fineweb-2`), or train "
                f"about {MAX_PASSES / self.most:.0%} of these steps")

    def record(self, key: str = "passes") -> dict:
        """What hparams.json, train_log.jsonl and the model card say of the passes: the plan's
        (`key` "passes"), or what the run read by its end ("passes_read")."""
        weights = {name: w for name, (_t, w) in self.sources.items()}
        tokens = {name: round(t / w) if w > 0 else 0 for name, (t, w) in self.sources.items()}
        tokens.update({code: t.tokens for code, t in self.languages.items()})
        return {key: round(self.total, 3), f"{key}_most": round(self.most, 3), f"{key}_steps": self.steps,
                f"{key}_per_phase": [round(p.passes, 3) for p in self.phases], f"{key}_tokens": self.tokens_read,
                "text_tokens": self.text_tokens,
                f"{key}_by_source": {name: {"passes": round(p, 3), "weight": weights.get(name, 1.0),
                                            "tokens": tokens.get(name)} for name, p in self.by_source().items()}}


def _n(passes: float) -> str:
    return f"{passes:,.0f}" if passes >= 100 else f"{passes:.1f}" if passes >= 1 else f"{passes:.2f}"


def count_passes(plan, world_size: int, up_to: int | None = None, languages: dict | None = None,
                 sampling: list[tuple[float, int]] | None = None) -> Passes | None:
    """The run's passes over its steps (up to step `up_to`, else the plan's end); None where the
    data says nothing to count by. `languages` ({code: its loader facts}) and `sampling` ([(alpha,
    first step)] of the --sampling_alpha schedule) for a run on several languages."""
    end = plan.end if up_to is None else min(up_to, plan.end)
    phases = []
    for k, phase in enumerate(plan.phases):
        steps = max(0, min(plan.phase_end(k), end) - plan.starts[k])
        rows_read = steps * phase.rows * world_size
        if languages:
            return _languages(rows_read, end, languages, sampling or [(0.0, 0)])
        text = training_text(phase.input_dir)
        rows = text.rows if text else sum(s.num_samples for s in phase.shards.train)
        phases.append(PhaseText(rows_read, rows, text.dupe_factor if text else 1, text.tokens if text else None))
        if k == 0:
            sources = text.sources if text else {}
    if not any(p.rows for p in phases):
        return None
    return Passes(phases, end, sources)


def _languages(rows_read: float, end: int, languages: dict, sampling: list) -> Passes:
    """Each language's passes: its mean sampling share over the run's steps x the rows read."""
    starts = [s for _a, s in sampling] + [end]
    spans = [max(0, min(b, end) - min(a, end)) for a, b in zip(starts, starts[1:])]
    out = {}
    for code, facts in languages.items():
        shares = facts["sampling_shares"]
        share = sum(s * n for s, n in zip(shares, spans)) / sum(spans) if sum(spans) else shares[0]
        text = training_text(facts["input_dir"])
        out[code] = PhaseText(rows_read * share, text.rows if text else facts["train_samples"],
                              text.dupe_factor if text else 1, text.tokens if text else None)
    return Passes([PhaseText(rows_read, sum(t.rows for t in out.values()))], end, {}, out)


def run_passes(trainer, up_to: int | None = None) -> Passes | None:
    """A Trainer's passes (trainer/loop.py): its plan, ranks, languages and sampling schedule
    (trainer/start/parts.py's sampling_phases, which brings torch along)."""
    if not trainer.languages:
        return count_passes(trainer.plan, trainer.env.world_size, up_to)
    sampling = schedule_steps(parse_alpha_schedule(trainer.config.sampling_alpha), trainer.plan.max_steps)
    return count_passes(trainer.plan, trainer.env.world_size, up_to, trainer.data.facts(), sampling)


def announce_plan(trainer) -> dict:
    """As the loop starts: the plan's passes in a line (on a GPU past MAX_PASSES, the warning);
    returns their record, for hparams.json."""
    passes = run_passes(trainer)
    if trainer.env.is_main:
        log.info(passes.line() if passes else "passes: not counted (the data holds no training rows)")
        if passes and trainer.env.device.type == "cuda" and (warning := passes.warning()):
            log.warning(warning)
    return passes.record() if passes else {"passes": None}


def announce_read(trainer) -> dict:
    """At the plan's end: what the run read, in a line; its record, for the last training record
    of train_log.jsonl."""
    passes = run_passes(trainer, trainer.step)
    if passes is None:
        return {}
    if trainer.env.is_main:
        log.info(passes.line("the run read"))
    return passes.record("passes_read")
