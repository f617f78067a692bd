"""The training loop: a Trainer holds the model, optimizer, data and run state.

    trainer = Trainer(config)     # checks the input, joins the process group, builds, resumes
    summary = trainer.train()     # up to max_steps (or steps_this_run); logs, evaluates, saves
    trainer.env.shutdown()        # leave the process group

`config` is the run's frozen TrainConfig (trainer/config/resolved.py); the parts are built by
trainer/build.py. One optimizer step is `gradient_accumulation_steps` micro-batches, the
all-reduce only on the last one (DDP), or DeepSpeed's engine under --deepspeed. Everything a
user can get wrong is checked before the process group exists, so all ranks fail alike with
one TrainError.
"""
from __future__ import annotations

import contextlib
import logging
import math
import time
from pathlib import Path

import torch

from trainer.build import (
    build_loader,
    build_model,
    build_optimization,
    check_inputs,
    describe_languages,
    describe_objective,
    sampling_phases,
)
from trainer.checkpoint.files import load_deepspeed_checkpoint, set_rng_state
from trainer.checkpoint.layout import DS_TAG, MODEL_CONFIG
from trainer.checkpoint.save import read_for_resume, save_checkpoint
from trainer.checkpoint.space import check_checkpoint_space, checkpoint_bytes
from trainer.errors import TrainError
from trainer.evaluation import eval_line, eval_size_warning, evaluate, evaluate_languages
from trainer.models import get_family
from trainer.runtime.budget import budget_max_steps
from trainer.runtime.distributed import init_distributed
from trainer.runtime.logs import MetricsLogger, setup_logging
from trainer.runtime.output_dir import check_resume, copy_vocab, prepare_output_dir, write_run_info
from trainer.start import plan_start

log = logging.getLogger("trainer")


class Trainer:
    """Holds the model, optimizer, data and run state; `train()` runs the loop."""

    def __init__(self, config):
        started = time.monotonic()   # the --train_budget clock
        self.config = config
        self.family = family = get_family(config.model_type)
        self.start = plan_start(config, family)   # the model config, the tokenizers (trainer/start.py)
        self.model_config = self.start.model_config
        self.shards, masker, self.languages = check_inputs(config, family, self.start)
        # Everything above is checked before any process group exists: all ranks fail alike.
        self.env = env = init_distributed(config.device, force=config.deepspeed)
        setup_logging(env.is_main)
        log.info(config.speed_note)
        log.info("objective: %s", self.objective())
        self.out = Path(config.output_dir)
        latest = prepare_output_dir(config, env.is_main)
        check_resume(latest, self.out, config, env.world_size, family.config_dict(self.model_config), self.start.spec)
        env.barrier()
        self.vocab_size = copy_vocab(self.start.spec, family.vocab_size(self.model_config), self.out,
                                     write=env.is_main)
        self.model = build_model(config, family, self.start, env,
                                 init_weights=(config.phase == 2 or config.init_from is not None)
                                 and latest is None)
        # DeepSpeed converts the model itself; else autocast in the precision asked for
        self.autocast_dtype = None if config.deepspeed else {
            "bf16": torch.bfloat16, "fp16": torch.float16}.get(config.precision)
        if config.train_budget:   # max_steps from the budget (or the checkpoint), before the schedule
            self.config = config = config.replace(max_steps=budget_max_steps(
                config, latest, started, self.model, self.shards.train, env, self.forward))
        opt = build_optimization(config, self.model, env)
        self.optimizer, self.scheduler, self.scaler = opt.optimizer, opt.scheduler, opt.scaler
        self.engine, self.ddp = opt.engine, opt.ddp
        self.step = 0
        self.data = build_loader(config, self.shards, env, family.vocab_size(self.model_config), masker,
                                 self.languages)
        if self.languages:
            log.info(describe_languages(config, self.data.facts()))
        # Dropout streams differ per rank (never shared), fixed by the seed.
        torch.manual_seed(config.seed + 1_000_003 * (env.rank + 1))
        if latest is not None:
            self.resume(latest)

    @property
    def phase(self) -> int:
        return self.config.phase

    def objective(self) -> str:
        """What is trained, in words (the log and the model card say it)."""
        return describe_objective(self.config, self.family)

    def checkpoint_bytes(self) -> int:
        """This rank's part of a checkpoint (trainer/checkpoint/space.py)."""
        return checkpoint_bytes(self.model, self.optimizer, self.engine, self.env)

    # -- checkpoints -----------------------------------------------------------------------
    def _model_state(self, tmp_dir):
        if self.engine is not None and self.config.precision != "fp32":
            try:  # the fp32 master weights, not the bf16 working copy
                from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint
                sd = get_fp32_state_dict_from_zero_checkpoint(str(tmp_dir), tag="deepspeed")
                full = self.model.state_dict()
                return {k: sd.get(k, v).detach().float().cpu() if torch.is_floating_point(v) else v.cpu()
                        for k, v in full.items()}
            except Exception as exc:  # e.g. ZeRO stage 0: no partitioned fp32 files
                log.warning("model.pt from the %s module weights (%s)", self.config.precision, exc)
        return {k: (v.detach().float() if torch.is_floating_point(v) else v).cpu()
                for k, v in self.model.state_dict().items()}

    def save(self):
        # the disk may have filled since the start
        check_checkpoint_space(self.out, self.step, self.env, self.checkpoint_bytes())
        state = {"step": self.step, "loader": self.data.state_dict(), "phase": self.phase,
                 "max_steps": self.config.max_steps}
        if self.engine is None:
            state.update(optimizer=self.optimizer.state_dict(),
                         scheduler=self.scheduler.state_dict(), scaler=self.scaler.state_dict())
        path = save_checkpoint(self.out, self.step, self.env,
                               meta={"phase": self.phase,
                                     MODEL_CONFIG: self.family.config_dict(self.model_config),
                                     "model_type": self.family.name,
                                     "max_steps": self.config.max_steps,
                                     **({"export_class": self.start.export_class}
                                        if self.start.export_class else {})},
                               model_state_fn=self._model_state, trainer_state=state,
                               keep=self.config.keep_checkpoints, ds_engine=self.engine)
        log.info("checkpoint %s", path)

    def resume(self, ckpt):
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
        self.data.load_state_dict(state["loader"])
        self.step = state["step"]
        if rng is not None and meta["world_size"] == self.env.world_size:
            set_rng_state(rng)
        log.info("resumed from %s at step %d (epoch %d)", ckpt, self.step, self.data.epoch)

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
        batch = self.to_device(next(data))
        for i in range(accum):
            last = i == accum - 1
            if self.engine is not None:
                out = self.forward(self.engine, batch)
                batch = None if last else self.to_device(next(data))
                self.engine.backward(out.loss)  # DeepSpeed scales by 1/accum itself
                self.engine.step()              # steps only at the accumulation boundary
            else:
                # the all-reduce runs only on the last micro-step
                sync = self.ddp.no_sync() if (self.ddp is not None and not last) else contextlib.nullcontext()
                with sync:
                    out = self.forward(self.ddp or self.model, batch)
                    batch = None if last else self.to_device(next(data))
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
    def write_run_info(self):
        if not self.env.is_main:
            return
        c = self.config
        mix = {} if not self.languages else {
            "languages": self.data.facts(),
            "sampling_schedule": [{"alpha": a, "start_step": s} for a, s in sampling_phases(c)]}
        write_run_info(self.out, c, self.family.config_dict(self.model_config), step=self.step, **mix,
                       world_size=self.env.world_size, precision=c.precision, phase=self.phase,
                       global_batch_size=c.train_batch_size * c.gradient_accumulation_steps
                       * self.env.world_size,
                       device=str(self.env.device), train_files=len(self.shards.train),
                       train_samples=self.data.num_samples, seq_len=self.shards.seq_len,
                       max_pred=self.shards.max_pred, objective=self.objective())

    def train(self) -> dict:
        """Steps up to max_steps (or --steps_this_run), logging every log_every steps, evaluating
        every eval_every steps and at the last one, checkpointing every checkpoint_every steps
        and at the end of this run; returns the last logged record with the step counts."""
        config, env = self.config, self.env
        self.write_run_info()
        metrics = MetricsLogger(self.out, enabled=env.is_main, tensorboard=config.tensorboard)
        metrics.truncate_after(self.step)
        end = config.max_steps if config.steps_this_run is None else min(
            config.max_steps, self.step + config.steps_this_run)
        if self.step >= end:
            log.info("nothing to do: step %d already reached max_steps %d", self.step, config.max_steps)
        it = iter(self.data)
        window = torch.zeros(3, dtype=torch.float64)
        window_steps, t0, last = 0, time.perf_counter(), {}
        first_step, self.warned_eval = self.step, False
        try:
            while self.step < end:
                lr = self.lr
                loss, mlm, nsp, gnorm = self.train_step(it, config.gradient_accumulation_steps)
                self.step += 1
                window += torch.tensor([loss, mlm, nsp], dtype=torch.float64)
                window_steps += 1
                if self.step % config.log_every == 0 or self.step == end:
                    last = self.log_train(metrics, window, window_steps,
                                          time.perf_counter() - t0, lr, gnorm)
                    window.zero_()
                    window_steps, t0 = 0, time.perf_counter()
                # every eval_every steps, and at the last step whatever eval_every is: a run
                # shorter than eval_every still ends with an eval (once: a finished run that is
                # started again trains no step, so it logs none)
                if config.eval_every and self.shards.test and (self.step % config.eval_every == 0
                                                               or self.step == config.max_steps):
                    self.log_eval(metrics)
                    t0 = time.perf_counter()
                if self.step % config.checkpoint_every == 0 or self.step == end:
                    self.save()
                    t0 = time.perf_counter()
        finally:
            self.data.close()
            metrics.close()
        summary = {"step": self.step, "steps_this_run": self.step - first_step, **last}
        if env.is_main:
            log.info("done: step %d of %d, output in %s", self.step, config.max_steps, self.out)
        return summary

    def log_train(self, metrics, window, steps: int, seconds: float, lr: float, gnorm: float) -> dict:
        """The mean losses of the last `steps` steps over ranks, logged; returns the record."""
        config, env = self.config, self.env
        mean = env.all_reduce_mean(window.to(env.device)).cpu() / steps
        record = {"loss": mean[0].item(), "mlm_loss": mean[1].item(), "nsp_loss": mean[2].item(),
                  "lr": lr, "grad_norm": gnorm,
                  "samples_per_sec": steps * config.gradient_accumulation_steps * config.train_batch_size
                  * env.world_size / seconds, "epoch": self.data.epoch}
        if self.languages:   # each language's own epoch (a small one repeats more often)
            record.update({f"epoch/{code}": e for code, e in self.data.epochs().items()})
        if not math.isfinite(record["loss"]):
            log.warning("step %d: loss is %s", self.step, record["loss"])
        if config.no_nsp:   # no next-sentence loss was trained
            del record["nsp_loss"]
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
        if self.languages:   # each language's test shards apart; the overall: their mean
            ev = evaluate_languages(module, self.languages, self.config, self.env, self.forward)
        else:
            ev = evaluate(module, self.shards.test, self.config, self.env, self.forward)
        metrics.log(self.step, ev, prefix="eval")
        log.info(eval_line(self.step, ev, codes))
        tests = [(f"{lang.code}: ", ev[f"eval_instances/{lang.code}"], lang.shards.test)
                 for lang in self.languages if f"eval_instances/{lang.code}" in ev]
        warnings = [where + w for where, n, shards in tests or [("", ev["eval_instances"], self.shards.test)]
                    if (w := eval_size_warning(n, shards, self.config.eval_max_samples))]
        if warnings and self.env.is_main and not self.warned_eval:
            for warning in warnings:
                log.warning(warning)
            self.warned_eval = True
        return ev
