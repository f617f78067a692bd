"""The training loop: a Trainer holds the model, optimizer, data and run state.

    trainer = Trainer(config)     # checks the input, joins the process group, builds, resumes
    summary = trainer.train()     # up to max_steps (or steps_this_run); logs, evaluates, saves
    trainer.env.shutdown()        # leave the process group

`config` is the run's frozen TrainConfig (trainer/config/resolved.py); the parts are built by
trainer/start/parts.py. One optimizer step is `gradient_accumulation_steps` micro-batches, the
all-reduce only on the last one (DDP), or DeepSpeed's engine under --deepspeed. Everything a
user can get wrong is checked before the process group exists, so all ranks fail alike with
one TrainError. The steps follow the run's plan (trainer/schedule/plan.py): its sequence-length phases,
each opened with its own loader and RoPE θ at its first step, and its end, which the budget's
pacer (trainer/runtime/pacing.py) moves when the pace drifts. A wsd run keeps its last checkpoint
before the decay, where --extend continues it to a larger total (trainer/start/extension.py).
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import time

import torch

from trainer.checkpoint.files import load_deepspeed_checkpoint, set_rng_state
from trainer.checkpoint.layout import DS_TAG, MODEL_CONFIG, STABLE
from trainer.checkpoint.save import drop_checkpoints_after, model_state, read_for_resume, save_checkpoint
from trainer.checkpoint.space import check_checkpoint_space, checkpoint_bytes
from trainer.errors import TrainError
from trainer.evaluation.context import phase_evaluation
from trainer.evaluation.heldout import eval_line, eval_size_warnings, evaluate_languages
from trainer.models import get_family
from trainer.runtime.card_use import CardMeter, figures_line
from trainer.runtime.logs import MetricsLogger
from trainer.runtime.output_dir import write_run_info
from trainer.start import steps as startup
from trainer.start.extension import check_budget, extend_plan, set_lr_now
from trainer.start.parts import (
    build_loader,
    build_optimization,
    describe_languages,
    describe_objective,
    sampling_phases,
)
from trainer.start.passes import announce_plan, announce_read

log = logging.getLogger("trainer")


class Trainer:
    """Holds the model, optimizer, data and run state; `train()` runs the loop."""

    def __init__(self, config):
        """The run's start, a list of steps (trainer/start/steps.py); all before `join` is checked
        before any process group exists, so that every rank fails alike with one TrainError."""
        started = time.monotonic()   # the --train_budget clock
        self.family = family = get_family(config.model_type)
        inputs = startup.check(config, family)                                      # 1. check
        self.config, self.phases, notes = startup.resolve(config, family, inputs)   # 2. the config, once
        config, self.start, self.languages = self.config, inputs.start, inputs.languages
        self.model_config = self.start.model_config
        self.env = env = startup.join(config, family, notes)                        # 3. distributed
        output = startup.open_output(config, family, self.start, env)               # 4. output folder
        self.out, self.model_config_record = output.path, output.model_config_record
        self.vocab_size = output.vocab_size
        self.model = startup.make_model(config, family, self.start, env, output.latest)   # 5. model
        self.autocast_dtype = startup.autocast_dtype(config)
        self.plan, self.pacer = startup.plan_run(config, self.phases, output.latest, started,   # 6. budget
                                                 self.model, env, self.forward)
        opt = build_optimization(config, self.model, env, self.plan)                # 7. optimizer
        self.optimizer, self.scheduler, self.scaler = opt.optimizer, opt.scheduler, opt.scaler
        self.engine, self.ddp = opt.engine, opt.ddp
        self.meter = CardMeter(self.model_config, env.device, config.precision, env.world_size)   # the record
        self.begin(output.latest)                                                   # 8. resume

    def begin(self, latest) -> None:
        """The dropout seed, the checkpoint's state when resuming (`latest`), the first phase's data."""
        self.step, self.phase_index, self.data = 0, None, None
        self.stable_step, self.extended = None, None   # the step before the decay; --extend's record
        # Dropout streams differ per rank (never shared), fixed by the seed.
        torch.manual_seed(self.config.seed + 1_000_003 * (self.env.rank + 1))
        ckpt, saved_phase, loader_state = self.resume(latest) if latest is not None else (None, 0, None)
        if self.config.extend and ckpt is not None:
            self.extend()
        k = self.plan.phase_at(self.step)   # a checkpoint at a phase's end: the next one, afresh
        self.open_phase(k, loader_state if k == saved_phase else None)
        if ckpt is not None:
            log.info("resumed from %s at step %d (epoch %d%s)", ckpt, self.step, self.data.epoch,
                     f", phase {k + 1} of {len(self.phases)}" if self.plan.phased else "")
        if self.languages:
            log.info(describe_languages(self.config, self.data.facts()))

    # -- phases ----------------------------------------------------------------------------
    def open_phase(self, k: int, loader_state: dict | None = None) -> None:
        """Phase k's loader (at `loader_state`, or from its start) and its RoPE θ on the model."""
        if self.data is not None:
            self.data.close()
        phase = self.phases[k]
        self.phase_index, self.shards = k, phase.shards
        self.data = build_loader(self.config, phase, self.env, self.family.vocab_size(self.model_config),
                                 self.languages, self.plan.max_steps)
        if loader_state is not None:
            self.data.load_state_dict(loader_state)
        if self.plan.phased and phase.thetas:
            module = self.engine.module if self.engine is not None else self.model
            self.family.set_rope_thetas(module, phase.thetas)   # and what checkpoints record:
            self.model_config = self.family.with_rope_thetas(self.model_config, phase.thetas)
        if self.pacer is not None:
            self.pacer.start_window(self.step, k, self.env)
        self.meter.new_phase()

    def extend(self) -> None:
        """--extend: the plan to the new total from this checkpoint in the stable phase; the old
        decay's checkpoints removed, so that no resume goes back to them."""
        extension = extend_plan(self.config, self.plan, self.pacer, self.step)
        if extension is None:   # planned for this total already: a resume
            return
        line, self.extended = extension
        set_lr_now(self.optimizer, self.scheduler, self.plan, self.step)
        removed = drop_checkpoints_after(self.out, self.step, self.env)
        self.stable_step = None   # the new decay gets its own
        log.info("%s%s", line, f"; the old decay's checkpoints removed: {', '.join(removed)}" if removed else "")

    def announce_phase(self, metrics) -> None:
        """One log line and one train_log.jsonl record as a phase starts (its first step's number)."""
        line, record = self.plan.phase_start(self.phase_index)
        if self.pacer is not None:   # when, on the budget's clock
            record["budget_elapsed_s"] = round(self.pacer.elapsed(), 3)
        log.info(line)
        metrics.log(self.step + 1, record, prefix="phase")

    def replan(self, metrics, starts: list[int], end: int, record: dict) -> None:
        """The budget's re-plan (trainer/runtime/pacing.py): the end, the phases not begun."""
        if line := self.plan.replan(self.step, starts, end, record):   # "": a small move, no line
            log.info(line)
        metrics.log(self.step, {"replan_end": end, "replan_starts": starts, **record}, prefix="replan")

    def aside(self, what: str):
        """Time the budget's pace leaves out (evaluations, checkpoints)."""
        return self.pacer.aside(what) if self.pacer is not None else contextlib.nullcontext()

    @property
    def phase(self) -> int:
        return self.config.phase

    def checkpoint_bytes(self) -> int:
        """This rank's part of a checkpoint (trainer/checkpoint/space.py)."""
        return checkpoint_bytes(self.model, self.optimizer, self.engine, self.env)

    # -- checkpoints -----------------------------------------------------------------------
    def save(self, stable: bool = False):
        """A checkpoint of the run's state; `stable`: the last before the decay (kept, marked)."""
        check_checkpoint_space(self.out, self.step, self.env, self.checkpoint_bytes())
        if stable:
            self.stable_step = self.step
        state = {"step": self.step, "loader": self.data.state_dict(), "phase": self.phase,
                 "max_steps": self.plan.max_steps, "plan": self.plan.state_dict(),
                 "phase_index": self.phase_index, "stable_step": self.stable_step}
        if self.pacer is not None:   # the budget's clock and timings
            state["budget"] = self.pacer.state_dict()
        if self.engine is None:
            state.update(optimizer=self.optimizer.state_dict(),
                         scheduler=self.scheduler.state_dict(), scaler=self.scaler.state_dict())
        weights = functools.partial(model_state, self.model, self.engine, self.config.precision)
        path = save_checkpoint(self.out, self.step, self.env,
                               meta={"phase": self.phase,
                                     MODEL_CONFIG: self.family.config_dict(self.model_config),
                                     "model_type": self.family.name,
                                     "max_steps": self.plan.max_steps, "end_step": self.plan.end,
                                     **({"budget_s": self.pacer.budget_s} if self.pacer is not None else {}),
                                     "stable_step": self.stable_step, **({STABLE: True} if stable else {}),
                                     **({"export_class": self.start.export_class}
                                        if self.start.export_class else {})},
                               model_state_fn=weights, trainer_state=state,
                               keep=self.config.keep_checkpoints, ds_engine=self.engine)
        log.info("checkpoint %s%s", path, " (the last before the decay: kept for --extend)" if stable else "")

    def resume(self, ckpt) -> tuple:
        """The checkpoint's model, optimizer, plan and clock; (the checkpoint read, its phase,
        its loader's state)."""
        ckpt, meta, state, rng, weights = read_for_resume(ckpt, self.env)  # or the one before
        if self.engine is not None:
            if not (ckpt / DS_TAG).is_dir():
                raise TrainError(f"{ckpt} was not written under --deepspeed: resume without it")
            load_deepspeed_checkpoint(self.engine, ckpt)
        else:
            if "optimizer" not in state:
                raise TrainError(f"{ckpt} was written under --deepspeed: resume with --deepspeed")
            self.model.load_state_dict(weights)
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
            self.scaler.load_state_dict(state["scaler"])
        if "plan" in state:   # (checkpoints before phases: the plan of their max_steps)
            if changed := self.plan.load_state_dict(state["plan"], exact=self.config.extend):
                log.info(changed)
        if self.pacer is not None and "budget" in state:
            self.pacer.load_state_dict(state["budget"])
            self.pacer.replan = self.config.budget_replan
            check_budget(self.config, self.pacer, ckpt)
        self.step = state["step"]
        self.stable_step = state.get("stable_step")
        if rng is not None and meta["world_size"] == self.env.world_size:
            set_rng_state(rng)
        return ckpt, state.get("phase_index", 0), state["loader"]

    # -- one step --------------------------------------------------------------------------
    def forward(self, module, batch):
        """`module` on `batch` under the run's autocast (training, evaluation, the budget's timing)."""
        ctx = (torch.autocast(self.env.device.type, dtype=self.autocast_dtype)
               if self.autocast_dtype is not None else contextlib.nullcontext())
        with ctx:
            return module(**batch)

    def to_device(self, host: dict) -> dict:
        """A loader batch on the device: non-blocking copies from pinned memory (with --unpad
        the loader also found where the real tokens are, on the host: no GPU sync)."""
        return {k: v.to(self.env.device, non_blocking=True) for k, v in host.items()}

    def train_step(self, data, accum: int) -> tuple[float, float, float, float]:
        """One optimizer step over `accum` micro-batches from the iterator `data`; returns
        (loss, mlm, nsp, grad_norm). The next micro-batch is fetched and queued for copying
        while the GPU runs this one's forward (nothing in a forward waits for the GPU), so the
        loader's host time hides behind GPU work, except before a step's first micro-batch."""
        # summed on the device: one host sync per step (at the end), not three per micro-step
        sums = torch.zeros(3, dtype=torch.float64, device=self.env.device)
        grad_norm = float("nan")
        batch = self.to_device(self.meter.count(next(data)))
        for i in range(accum):
            last = i == accum - 1
            if self.engine is not None:
                out = self.forward(self.engine, batch)
                batch = None if last else self.to_device(self.meter.count(next(data)))
                self.engine.backward(out.loss)  # DeepSpeed scales by 1/accum itself
                self.engine.step()              # steps only at the accumulation boundary
            else:
                # the all-reduce runs only on the last micro-step
                sync = self.ddp.no_sync() if (self.ddp is not None and not last) else contextlib.nullcontext()
                with sync:
                    out = self.forward(self.ddp or self.model, batch)
                    batch = None if last else self.to_device(self.meter.count(next(data)))
                    self.scaler.scale(out.loss / accum).backward()
            nsp = out.nsp_loss if out.nsp_loss is not None else torch.zeros_like(out.loss)
            sums += torch.stack([out.loss, out.mlm_loss, nsp]).detach().double()
        if self.engine is not None:
            gn = self.engine.get_global_grad_norm()
            grad_norm = float(gn) if gn is not None else float("nan")
        else:
            self.scaler.unscale_(self.optimizer)
            norm = None
            if self.config.max_grad_norm > 0:
                norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
            if norm is not None:
                grad_norm = float(norm)
        loss, mlm, nsp = (sums / accum).tolist()
        return loss, mlm, nsp, grad_norm

    @property
    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    # -- the loop --------------------------------------------------------------------------
    def write_run_info(self, passes: dict | None = None):
        if not self.env.is_main:
            return
        c, phase = self.config, self.phases[0]   # with phases, the first (phase_plan: all)
        mix = {} if not self.languages else {
            "languages": self.data.facts(),
            "sampling_schedule": [{"alpha": a, "start_step": s} for a, s in sampling_phases(c, self.plan.max_steps)]}
        if self.plan.phased:   # each phase's settings and planned steps
            mix["phase_plan"] = self.plan.steps()
        # max_steps: the plan's (a budget's measured count), in the config's place in hparams.json
        write_run_info(self.out, c, self.model_config_record, step=self.step, max_steps=self.plan.max_steps, **mix,
                       world_size=self.env.world_size, precision=c.precision, phase=self.phase,
                       global_batch_size=phase.rows * self.env.world_size,
                       device=str(self.env.device), train_files=len(phase.shards.train),
                       train_samples=sum(s.num_samples for s in phase.shards.train), seq_len=phase.seq_len,
                       max_pred=phase.max_pred, objective=describe_objective(c, self.family), **(passes or {}))

    def run_end(self, first_step: int) -> int:
        """This run's last step: the plan's end, or --steps_this_run steps after `first_step`."""
        if self.config.steps_this_run is None:
            return self.plan.end
        return min(self.plan.end, first_step + self.config.steps_this_run)

    def train(self) -> dict:
        """Steps up to the plan's end (or --steps_this_run), a phase at a time, logging every
        log_every steps, evaluating every eval_every steps and at the last one, checkpointing
        every checkpoint_every steps, at every phase's end and at the end of this run; with
        --train_budget, re-planning as the pace drifts. Returns the last logged record with the
        step counts."""
        config, env, plan = self.config, self.env, self.plan
        self.write_run_info(announce_plan(self))   # and the plan's passes over its text, said
        metrics = MetricsLogger(self.out, enabled=env.is_main, tensorboard=config.tensorboard)
        metrics.truncate_after(self.step)
        if self.extended is not None:   # after the truncation: the old decay's records are gone
            metrics.log(self.step, self.extended, prefix="extend")
        first_step, self.warned_eval = self.step, False
        if self.step >= self.run_end(first_step):
            log.info("nothing to do: step %d already reached max_steps %d", self.step, plan.end)
        elif plan.phased and self.step == plan.starts[self.phase_index]:
            self.announce_phase(metrics)
        it = iter(self.data)
        window = torch.zeros(3, dtype=torch.float64)
        window_steps, t0, last = 0, time.perf_counter(), {}
        if self.pacer is not None:
            self.pacer.start_window(self.step, self.phase_index, env)
        try:
            while self.step < self.run_end(first_step):
                if plan.phase_at(self.step) != self.phase_index:   # its own data, batch and θ
                    self.open_phase(plan.phase_at(self.step))
                    self.announce_phase(metrics)
                    it = iter(self.data)
                lr = self.lr
                loss, mlm, nsp, gnorm = self.train_step(it, self.phases[self.phase_index].gradient_accumulation_steps)
                self.step += 1
                stable = self.stable_step is None and plan.decays_after(self.step)
                window += torch.tensor([loss, mlm, nsp], dtype=torch.float64)
                window_steps += 1
                phase_end = plan.phased and plan.is_phase_end(self.step)
                self.meter.closing = phase_end or self.step == plan.end   # its figures in the last record
                if self.step % config.log_every == 0 or self.step == self.run_end(first_step) or phase_end:
                    last = self.log_train(metrics, window, window_steps,
                                          time.perf_counter() - t0, lr, gnorm)
                    window.zero_()
                    window_steps, t0 = 0, time.perf_counter()
                if self.pacer is not None and self.pacer.due(self.step) and self.step < plan.end:
                    change = self.pacer.check(self.step, self.phase_index, plan.starts, plan.end, env)
                    if change is not None:
                        self.replan(metrics, *change)
                        phase_end = plan.phased and plan.is_phase_end(self.step)
                # every eval_every steps, and at the last step whatever eval_every is: a run shorter than eval_every
                # still ends with an eval (once: a finished run that is started again trains no step, so it logs none)
                if config.eval_every and self.shards.test and (self.step % config.eval_every == 0
                                                               or self.step == plan.end):
                    with self.aside("eval"):
                        self.log_eval(metrics)
                    t0 = time.perf_counter()
                if (self.step % config.checkpoint_every == 0 or self.step == self.run_end(first_step)
                        or phase_end or stable):
                    with self.aside("checkpoint"):
                        self.save(stable=stable)
                    t0 = time.perf_counter()
            if self.pacer is not None and self.step == plan.end > first_step:
                # the budget's clock at the end (the slowest rank's): one line and one record
                line, record = self.pacer.summary(env, config.train_budget, len(plan.replans), plan.replan_words())
                metrics.log(self.step, record, prefix="budget")
                log.info(line)
        finally:
            self.data.close()
            metrics.close()
        summary = {"step": self.step, "steps_this_run": self.step - first_step, **last}
        if env.is_main:
            log.info("done: step %d of %d, output in %s", self.step, plan.end, self.out)
        return summary

    def log_train(self, metrics, window, steps: int, seconds: float, lr: float, gnorm: float) -> dict:
        """The mean losses of the last `steps` steps over ranks, logged; returns the record."""
        config, env = self.config, self.env
        mean = env.all_reduce_mean(window.to(env.device)).cpu() / steps
        record = {"loss": mean[0].item(), "mlm_loss": mean[1].item(), "nsp_loss": mean[2].item(),
                  "lr": lr, "grad_norm": gnorm,
                  "samples_per_sec": steps * self.phases[self.phase_index].rows * env.world_size / seconds,
                  "epoch": self.data.epoch, **self.meter.window(seconds, self.phase_index)}
        if self.languages:   # each language's own epoch (a small one repeats more often)
            record.update({f"epoch/{code}": e for code, e in self.data.epochs().items()})
        if not math.isfinite(record["loss"]):
            log.warning("step %d: loss is %s", self.step, record["loss"])
        if config.no_nsp:   # no next-sentence loss was trained
            del record["nsp_loss"]
        record.update(announce_read(self) if self.step == self.plan.end else {})   # what the run read of its text
        metrics.log(self.step, record)
        losses = (f"mlm {record['mlm_loss']:.4f} nsp {record['nsp_loss']:.4f}"
                  if "nsp_loss" in record else "mlm only")
        log.info("step %d loss %.4f (%s) lr %.3g %.0f samples/s", self.step, record["loss"], losses, lr,
                 record["samples_per_sec"])
        return record

    def log_eval(self, metrics) -> dict:
        """Evaluate on the held-out shards, log it (and, once, when they are too few)."""
        module = self.engine.module if self.engine is not None else self.model
        codes = [lang.code for lang in self.languages]
        # each language's test shards apart (the overall: their mean), else the phase's (trainer/evaluation/context.py)
        ev = (evaluate_languages(module, self.languages, self.config, self.env, self.forward) if self.languages
              else phase_evaluation(module, self.phases[self.phase_index], self.config, self.env, self.forward))
        ev.update(self.meter.so_far())   # what the card did in the phase so far
        metrics.log(self.step, ev, prefix="eval")
        log.info("%s; %s", eval_line(self.step, ev, codes), figures_line(ev))
        warnings = eval_size_warnings(ev, self.languages, self.shards.test, self.config.eval_max_samples)
        if warnings and self.env.is_main and not self.warned_eval:
            for warning in warnings:
                log.warning(warning)
            self.warned_eval = True
        return ev
