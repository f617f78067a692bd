"""The training loop: a Trainer holds the model, optimizer, data and run state.

    trainer = Trainer(args)       # checks the input, joins the process group, builds, resumes
    summary = trainer.train()     # up to max_steps (or steps_this_run); logs, evaluates, saves
    trainer.env.shutdown()        # leave the process group

One optimizer step is `gradient_accumulation_steps` micro-batches, the all-reduce only on the
last one (DDP), or DeepSpeed's engine under --deepspeed. Everything a user can get wrong is
checked before the process group exists, so all ranks fail alike with one TrainError.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import time
from pathlib import Path

import torch

from pipeline.encoding.hdf5_format import MIN_EVAL_INSTANCES, few_eval_instances
from trainer.checkpoint import (DS_TAG, CheckpointError, load_deepspeed_checkpoint,
                                load_model_weights, read_for_resume, resolve_model_file,
                                save_checkpoint, set_rng_state)
from trainer.ckpt_space import check_checkpoint_space
from trainer.data import ShardedTrainData, eval_batches, find_shards
from trainer.budget import fix_max_steps
from trainer.distributed import init_distributed, resolve_device
from trainer.ds_settings import (deepspeed_settings, disable_ds_shm_comm, lamb_zero_warning,
                                 shm_comm_disabled)
from trainer.errors import TrainError
from trainer.logging_utils import MetricsLogger, setup_logging
from trainer.masking import MaskingError, build_masker
from trainer.models import (build_model, check_recipe, compile_model, config_dict,
                            load_model_config)
from trainer.optim import build_optimizer, build_scheduler
from trainer.output_dir import copy_vocab, prepare_output_dir, write_run_info
from trainer.speed import resolve_speed_options
from trainer.unpad import unpad_extras

log = logging.getLogger("trainer")


def resolve_precision(args, device: str) -> str:
    precision = args.precision or ("bf16" if device == "cuda" else "fp32")
    if precision == "fp16" and device != "cuda" and not args.deepspeed:
        raise TrainError("--precision fp16 needs CUDA (loss scaling on GPU): use fp32 or bf16 on CPU")
    return precision


class Trainer:
    """Holds the model, optimizer, data and run state; `train()` runs the loop."""

    def __init__(self, args):
        self.args = args
        started = time.monotonic()   # the --train_budget clock
        try:
            device = resolve_device(args.device)
        except ValueError as exc:  # e.g. --device cuda without a GPU
            raise TrainError(str(exc)) from None
        precision = resolve_precision(args, device)
        ds_config = None
        if args.deepspeed:
            ds_config, precision = deepspeed_settings(args, precision, device)
        self.precision = precision
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
        if args.deepspeed:
            self.autocast_dtype = None  # DeepSpeed converts the model itself
        speed_note = resolve_speed_options(args, device, precision)
        try:
            self.bert_config = load_model_config(args.model_type, args.bert_config)
        except ValueError as exc:
            raise TrainError(str(exc)) from None
        if args.phase2 and not args.init_checkpoint:
            raise TrainError("--phase2 needs --init_checkpoint")
        self.phase = 2 if args.phase2 else 1
        if args.phase2:  # a bad --init_checkpoint is found before output_dir is created
            try:
                resolve_model_file(args.init_checkpoint)
            except CheckpointError as exc:
                raise TrainError(str(exc)) from None
        self.shards = find_shards(args.input_dir)
        if self.shards.seq_len > self.bert_config.max_position_embeddings:
            raise TrainError(f"the shards have seq_len {self.shards.seq_len} > the model's "
                             f"max_position_embeddings {self.bert_config.max_position_embeddings}")
        try:
            packed = check_recipe(args, [s.path for s in self.shards.train])
            self.masker = build_masker(args, self.shards.seq_len, self.shards.max_pred,
                                       maskable=self.shards.seq_len - (1 if packed else 3))
        except (MaskingError, ValueError) as exc:
            raise TrainError(str(exc)) from None
        # Everything above is checked before any process group exists: all ranks fail alike.
        self.env = init_distributed(device, force=args.deepspeed)
        env = self.env
        setup_logging(env.is_main)
        log.info(speed_note)
        log.info("objective: %s", self.objective())
        self.out = Path(args.output_dir)
        latest = prepare_output_dir(args, self.phase, env.is_main)
        env.barrier()
        self.vocab_size = copy_vocab(args.vocab_file, self.bert_config.vocab_size, self.out,
                                     write=env.is_main)

        torch.manual_seed(args.seed)  # the same initial weights on every rank
        model = build_model(args.model_type, self.bert_config, unpad=args.unpad, nsp=not args.no_nsp)
        if self.phase == 2 and latest is None:
            try:
                src = load_model_weights(model, args.init_checkpoint)
            except CheckpointError as exc:
                raise TrainError(str(exc)) from None
            log.info("phase 2: weights from %s, fresh optimizer and schedule", src)
        model.to(env.device)
        if args.torch_compile:  # in place, before DDP/DeepSpeed wrap the model
            compile_model(model)
        self.model = model
        if args.train_budget:   # max_steps from the budget (or the checkpoint), before the schedule
            fix_max_steps(self, latest, started)
        self.optimizer = build_optimizer(model, args.optimizer, args.learning_rate, args.weight_decay)
        make_sched = lambda opt: build_scheduler(opt, args.warmup_proportion, args.max_steps,  # noqa: E731
                                                 kind=args.lr_schedule,
                                                 decay_proportion=args.decay_proportion)
        self.scheduler = make_sched(self.optimizer)
        self.engine = None
        self.ddp = None
        if args.deepspeed:
            if shm_comm_disabled():
                disable_ds_shm_comm()
            import deepspeed

            uses_ds_opt = "optimizer" in ds_config
            warning = lamb_zero_warning(ds_config, args.optimizer)
            if warning and env.is_main:
                log.warning(warning)
            uses_ds_sched = "scheduler" in ds_config
            self.engine, self.optimizer, _, self.scheduler = deepspeed.initialize(
                model=model, config=ds_config,
                model_parameters=model.parameters() if uses_ds_opt else None,
                optimizer=None if uses_ds_opt else self.optimizer,
                lr_scheduler=None if uses_ds_sched else make_sched)
        elif env.world_size > 1:
            self.ddp = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[env.local_rank] if device == "cuda" else None)
        self.scaler = torch.amp.GradScaler("cuda", enabled=(precision == "fp16" and not args.deepspeed))

        self.step = 0
        pin = device == "cuda"  # page-locked batches: non-blocking copies
        self.data = ShardedTrainData(self.shards.train, args.train_batch_size, args.seed,
                                     env.rank, env.world_size, vocab_size=self.bert_config.vocab_size,
                                     pin_memory=pin, masker=self.masker,
                                     extras=functools.partial(unpad_extras, pin=pin) if args.unpad else None)
        # Dropout streams differ per rank (never shared), fixed by the seed.
        torch.manual_seed(args.seed + 1_000_003 * (env.rank + 1))
        if latest is not None:
            self.resume(latest)

    def objective(self) -> str:
        """What is trained, in words (the log and the model card say it)."""
        a = self.args
        task = "masked LM only (--no_nsp)" if a.no_nsp else "masked LM + next sentence"
        if a.model_type != "bert":
            task = f"{a.model_type}, {task}"
        if a.masking == "static":
            return f"{task}; static masks from the HDF5"
        how = ", whole words" if a.whole_word_masking else ""
        return (f"{task}; dynamic masks, {a.mlm_probability:g} of the tokens{how}, "
                f"{a.mask_replace_prob:g} [MASK] / {a.random_replace_prob:g} random")

    # -- checkpoints -----------------------------------------------------------------------
    def _model_state(self, tmp_dir):
        if self.engine is not None and self.precision != "fp32":
            try:  # the fp32 master weights, not the bf16 working copy
                from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint
                sd = get_fp32_state_dict_from_zero_checkpoint(str(tmp_dir), tag="deepspeed")
                full = self.model.state_dict()
                return {k: sd.get(k, v).detach().float().cpu() if torch.is_floating_point(v) else v.cpu()
                        for k, v in full.items()}
            except Exception as exc:  # e.g. ZeRO stage 0: no partitioned fp32 files
                log.warning("model.pt from the %s module weights (%s)", self.precision, exc)
        return {k: (v.detach().float() if torch.is_floating_point(v) else v).cpu()
                for k, v in self.model.state_dict().items()}

    def save(self):
        check_checkpoint_space(self)   # the disk may have filled since the start
        state = {"step": self.step, "loader": self.data.state_dict(), "phase": self.phase,
                 "max_steps": self.args.max_steps}
        if self.engine is None:
            state.update(optimizer=self.optimizer.state_dict(),
                         scheduler=self.scheduler.state_dict(), scaler=self.scaler.state_dict())
        path = save_checkpoint(self.out, self.step, self.env,
                               meta={"phase": self.phase, "bert_config": config_dict(self.bert_config),
                                     "model_type": self.args.model_type,
                                     "max_steps": self.args.max_steps},
                               model_state_fn=self._model_state, trainer_state=state,
                               keep=self.args.keep_checkpoints, ds_engine=self.engine)
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
    def _forward(self, module, batch):
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
                out = self._forward(self.engine, batch)
                batch = None if last else self.to_device(next(data))
                self.engine.backward(out.loss)  # DeepSpeed scales by 1/accum itself
                self.engine.step()              # steps only at the accumulation boundary
            else:
                # the all-reduce runs only on the last micro-step
                sync = self.ddp.no_sync() if (self.ddp is not None and not last) else contextlib.nullcontext()
                with sync:
                    out = self._forward(self.ddp or self.model, batch)
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
            if self.args.max_grad_norm > 0:
                norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
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

    # -- evaluation ------------------------------------------------------------------------
    def evaluate(self) -> dict:
        """MLM and NSP loss and accuracy on the held-out *test* shards (summed over ranks)."""
        module = self.engine.module if self.engine is not None else self.model
        module.eval()
        # [mlm loss sum, mlm correct, mlm count, nsp loss sum, nsp correct, nsp count]
        acc = torch.zeros(6, dtype=torch.float64)
        bs = self.args.eval_batch_size or self.args.train_batch_size
        with torch.no_grad():
            for batch in eval_batches(self.shards.test, bs, self.env.rank, self.env.world_size,
                                      self.args.eval_max_samples):
                batch = {k: v.to(self.env.device) for k, v in batch.items()}
                out = self._forward(module, batch)
                m = out.mlm_labels.numel()
                b = out.nsp_logits.shape[0]
                acc += torch.tensor([
                    out.mlm_loss.item() * m,
                    (out.mlm_logits.argmax(-1) == out.mlm_labels).sum().item(), m,
                    (out.nsp_loss.item() if out.nsp_loss is not None else 0.0) * b,
                    (out.nsp_logits.argmax(-1) == batch["next_sentence_labels"]).sum().item(), b,
                ], dtype=torch.float64)
        module.train()
        acc = self.env.all_reduce_sum(acc.to(self.env.device)).cpu()
        mlm_n, nsp_n = max(acc[2].item(), 1), max(acc[5].item(), 1)
        res = {"eval_mlm_loss": acc[0].item() / mlm_n, "eval_mlm_acc": acc[1].item() / mlm_n,
               "eval_nsp_loss": acc[3].item() / nsp_n, "eval_nsp_acc": acc[4].item() / nsp_n}
        res["eval_instances"] = int(acc[5].item())
        if self.args.no_nsp:  # the NSP head was not trained: its figures mean nothing
            del res["eval_nsp_loss"], res["eval_nsp_acc"]
        res["eval_loss"] = res["eval_mlm_loss"] + res.get("eval_nsp_loss", 0.0)
        return res

    def eval_size_warning(self, n: int) -> str | None:
        """One line when the eval's `n` instances are too few to mean much, with the fix."""
        available = sum(s.num_samples for s in self.shards.test)
        limit = self.args.eval_max_samples
        if limit is not None and limit < min(available, MIN_EVAL_INSTANCES):
            return (f"eval on only {n:,} instances: raise --eval_max_samples {limit} "
                    f"(the test shards hold {available:,})")
        return few_eval_instances(n)

    # -- the loop --------------------------------------------------------------------------
    def write_run_info(self):
        if not self.env.is_main:
            return
        write_run_info(self.out, self.args, self.bert_config, world_size=self.env.world_size,
                       precision=self.precision, phase=self.phase,
                       global_batch_size=self.args.train_batch_size
                       * self.args.gradient_accumulation_steps * self.env.world_size,
                       device=str(self.env.device), train_files=len(self.shards.train),
                       train_samples=self.data.order.total, seq_len=self.shards.seq_len,
                       max_pred=self.shards.max_pred, objective=self.objective())

    def train(self) -> dict:
        args, env = self.args, self.env
        self.write_run_info()
        metrics = MetricsLogger(self.out, enabled=env.is_main, tensorboard=args.tensorboard)
        metrics.truncate_after(self.step)
        accum = args.gradient_accumulation_steps
        end = args.max_steps if args.steps_this_run is None else min(
            args.max_steps, self.step + args.steps_this_run)
        if self.step >= end:
            log.info("nothing to do: step %d already reached max_steps %d", self.step, args.max_steps)
        it = iter(self.data)
        window = torch.zeros(3, dtype=torch.float64)
        window_steps, t0, last = 0, time.perf_counter(), {}
        first_step = self.step
        warned_eval = False
        try:
            while self.step < end:
                lr = self.lr
                loss, mlm, nsp, gnorm = self.train_step(it, accum)
                self.step += 1
                window += torch.tensor([loss, mlm, nsp], dtype=torch.float64)
                window_steps += 1
                if self.step % args.log_every == 0 or self.step == end:
                    mean = env.all_reduce_mean(window.to(env.device)).cpu() / window_steps
                    dt = time.perf_counter() - t0
                    last = {"loss": mean[0].item(), "mlm_loss": mean[1].item(),
                            "nsp_loss": mean[2].item(), "lr": lr, "grad_norm": gnorm,
                            "samples_per_sec": window_steps * accum * args.train_batch_size
                            * env.world_size / dt, "epoch": self.data.epoch}
                    if not all(math.isfinite(v) for v in (last["loss"],)):
                        log.warning("step %d: loss is %s", self.step, last["loss"])
                    if args.no_nsp:
                        del last["nsp_loss"]
                    metrics.log(self.step, last)
                    losses = (f"mlm {last['mlm_loss']:.4f} nsp {last['nsp_loss']:.4f}"
                              if "nsp_loss" in last else "mlm only")
                    log.info("step %d loss %.4f (%s) lr %.3g %.0f samples/s", self.step,
                             last["loss"], losses, lr, last["samples_per_sec"])
                    window.zero_()
                    window_steps, t0 = 0, time.perf_counter()
                # every eval_every steps, and at the last step whatever eval_every is: a run
                # shorter than eval_every still ends with an eval (once: a finished run that is
                # started again trains no step, so it logs none)
                if args.eval_every and self.shards.test and (self.step % args.eval_every == 0
                                                             or self.step == args.max_steps):
                    ev = self.evaluate()
                    metrics.log(self.step, ev, prefix="eval")
                    nsp = (f" nsp {ev['eval_nsp_loss']:.4f} (acc {ev['eval_nsp_acc']:.3f})"
                           if "eval_nsp_loss" in ev else "")
                    log.info("step %d eval on %d instances: mlm %.4f (acc %.3f)%s", self.step,
                             ev["eval_instances"], ev["eval_mlm_loss"], ev["eval_mlm_acc"], nsp)
                    warning = self.eval_size_warning(ev["eval_instances"])
                    if warning and env.is_main and not warned_eval:
                        log.warning(warning)
                        warned_eval = True
                    t0 = time.perf_counter()
                if self.step % args.checkpoint_every == 0 or self.step == end:
                    self.save()
                    t0 = time.perf_counter()
        finally:
            self.data.close()
            metrics.close()
        summary = {"step": self.step, "steps_this_run": self.step - first_step, **last}
        if env.is_main:
            log.info("done: step %d of %d, output in %s", self.step, args.max_steps, self.out)
        return summary

