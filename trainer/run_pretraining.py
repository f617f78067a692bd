"""BERT pretraining (MLM + NSP) on the encode stage's HDF5 shards, NVIDIA-style.

Usage:
    # one GPU node, 8 ranks (phase 1, then phase 2 from phase 1's weights)
    torchrun --nproc_per_node=8 trainer/run_pretraining.py \\
        --config_file trainer/configs/phase1_base.json \\
        --input_dir data/hu/hdf5_lower_case_0_seq_len_128_max_pred_20_.../ \\
        --vocab_file data/hu/vocab --output_dir runs/hu_base_p1
    torchrun --nproc_per_node=8 trainer/run_pretraining.py \\
        --config_file trainer/configs/phase2_base.json --input_dir .../seq_len_512... \\
        --init_checkpoint runs/hu_base_p1 --output_dir runs/hu_base_p2

    # CPU, one process (also: python -m trainer.run_pretraining ...)
    python trainer/run_pretraining.py --config_file trainer/configs/tiny_cpu.json \\
        --input_dir D --vocab_file V --output_dir O

    # resume after an interruption: the same command plus --resume_from_checkpoint
    # DeepSpeed: add --deepspeed --deepspeed_config trainer/configs/ds_zero1.json

Every flag is also a key of the JSON --config_file (the command line wins); see --help.
`--train_batch_size` is per rank and micro-step: the global batch is
train_batch_size x gradient_accumulation_steps x ranks.
Writes to output_dir: hparams.json, bert_config.json, vocab.txt + tokenizer_config.json,
train_log.jsonl, tensorboard/, git_diff.patch (if the checkout is dirty) and
checkpoints/ckpt_{step:08d}/ (see trainer/checkpoint.py). Bad input ends with one
`Error: ...` line and exit status 1 (set WIKI2BERT_TRACEBACK=1 for the traceback).
"""
from __future__ import annotations

import os
import sys

if __package__ in (None, ""):  # run by path: make the repo root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import contextlib
import json
import logging
import math
import shutil
import time
from pathlib import Path

from trainer.config import ConfigError, parse_args

log = logging.getLogger("trainer")


class TrainError(ValueError):
    """A user-facing problem found while setting up or running training."""


# ---------------------------------------------------------------------------------------------
# Set-up pieces


def resolve_precision(args, device: str) -> str:
    precision = args.precision or ("bf16" if device == "cuda" else "fp32")
    if precision == "fp16" and device != "cuda" and not args.deepspeed:
        raise TrainError("--precision fp16 needs CUDA (loss scaling on GPU): use fp32 or bf16 on CPU")
    return precision


def prepare_output_dir(args, phase: int, is_main: bool):
    """Refuse to mix runs: existing checkpoints need --resume_from_checkpoint, same phase."""
    from trainer.checkpoint import latest_checkpoint, list_checkpoints, read_meta

    out = Path(args.output_dir)
    found = list_checkpoints(out)
    if found and not args.resume_from_checkpoint:
        raise TrainError(f"--output_dir {out} already holds checkpoints: add "
                         "--resume_from_checkpoint to continue that run, or choose a new --output_dir")
    latest = latest_checkpoint(out) if args.resume_from_checkpoint else None
    if latest is not None and read_meta(latest).get("phase") != phase:
        raise TrainError(f"--output_dir {out} holds phase-{read_meta(latest).get('phase')} checkpoints: "
                         f"use a separate --output_dir for phase {phase}")
    if is_main:
        out.mkdir(parents=True, exist_ok=True)
    return latest


def copy_vocab(vocab_file: str | None, bert_vocab_size: int, out: Path, write: bool) -> int | None:
    """Check the vocab against the model; copy it and its case setting into output_dir."""
    if not vocab_file:
        log.warning("no --vocab_file: output_dir gets no vocab.txt (export will need --vocab_file)")
        return None
    from vocab.bert_tokenizer import TOKENIZER_CONFIG, load_vocab, read_case_setting, tokenizer_config
    from pipeline.stage import write_json_atomic

    spec = load_vocab(vocab_file)
    if spec.size > bert_vocab_size:
        raise TrainError(f"--vocab_file {spec.vocab_file} has {spec.size} tokens but the model's "
                         f"vocab_size is {bert_vocab_size}: set vocab_size >= {spec.size} in --bert_config")
    if write:
        shutil.copyfile(spec.vocab_file, out / "vocab.txt")
        cfg = spec.vocab_file.parent / TOKENIZER_CONFIG
        if cfg.is_file():
            shutil.copyfile(cfg, out / TOKENIZER_CONFIG)
        else:
            write_json_atomic(out / TOKENIZER_CONFIG,
                              tokenizer_config(*read_case_setting(spec.vocab_file.parent)))
    return spec.size


def reconcile_global_batch(args, global_batch: int, fixed: set, path, world_size: int) -> None:
    """A DeepSpeed config's global train_batch_size = micro-batch x accumulation x ranks.

    DeepSpeed's own rule: the settings given (in its config or as our flags/config file) stay,
    the missing one is derived; with neither given, accumulation is 1. Anything that does not
    divide evenly is one clear error instead of DeepSpeed's assertion."""
    micro, accum = args.train_batch_size, args.gradient_accumulation_steps
    what = (f"{path} sets train_batch_size {global_batch} (global: micro-batch per rank x "
            f"gradient_accumulation_steps x {world_size} rank(s))")
    if {"train_batch_size", "gradient_accumulation_steps"} <= fixed:
        if micro * accum * world_size != global_batch:
            raise TrainError(f"{what}, but the micro-batch {micro} x accumulation {accum} x "
                             f"{world_size} = {micro * accum * world_size}: drop train_batch_size "
                             "there or one of --train_batch_size/--gradient_accumulation_steps")
        return
    if "train_batch_size" in fixed:
        accum, rest = divmod(global_batch, micro * world_size)
        name = f"micro-batch {micro}"
    else:
        micro, rest = divmod(global_batch, accum * world_size)
        name = f"gradient_accumulation_steps {accum}"
    if rest or min(micro, accum) < 1:
        raise TrainError(f"{what}, which is not a multiple of {name} x {world_size} rank(s): "
                         "change train_batch_size there or the flags")
    args.train_batch_size, args.gradient_accumulation_steps = micro, accum


def lamb_zero_warning(ds: dict, optimizer: str) -> str | None:
    """Our LAMB under ZeRO stage >= 1 sees flat partitions, not the model's tensors.

    DeepSpeed's ZeRO-1/2 hand the optimizer one flattened fp32 partition per param group and
    rank (DeepSpeed issue #490), so LAMB's per-tensor trust ratio ||w||/||update|| becomes one
    ratio per partition: a different optimizer from LAMB, whose results depend on the world
    size. Stage 0 (also with bf16) keeps the tensors and is exact LAMB."""
    stage = int((ds.get("zero_optimization") or {}).get("stage", 0) or 0)
    if optimizer != "lamb" or "optimizer" in ds or stage < 1:
        return None
    return (f"LAMB under ZeRO stage {stage}: DeepSpeed gives the optimizer flattened partitions, "
            "so the trust ratio is per partition, not per tensor (DeepSpeed #490); for exact LAMB "
            "use ZeRO stage 0 or no --deepspeed, or use --optimizer adamw (unaffected)")


def deepspeed_settings(args, precision: str, device: str,
                       world_size: int | None = None) -> tuple[dict, str]:
    """Read the DeepSpeed config; its batch and precision settings win, conflicts are errors."""
    path = args.deepspeed_config
    if world_size is None:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    try:
        with open(path, encoding="utf-8") as fh:
            ds = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise TrainError(f"--deepspeed_config {path}: cannot read it ({exc})") from None
    if not isinstance(ds, dict):
        raise TrainError(f"--deepspeed_config {path}: expected a JSON object")
    explicit = set(args.explicit)
    fixed = set()  # which of ours the DeepSpeed config or the user set
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        value = ds.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TrainError(f"{path}: {key} must be a positive integer, got {value!r}")
    for ours, theirs in (("train_batch_size", "train_micro_batch_size_per_gpu"),
                         ("gradient_accumulation_steps", "gradient_accumulation_steps")):
        if theirs in ds:
            if ours in explicit and getattr(args, ours) != ds[theirs]:
                raise TrainError(f"--{ours} {getattr(args, ours)} conflicts with {theirs} "
                                 f"{ds[theirs]} in {path}: drop one (the DeepSpeed config wins)")
            setattr(args, ours, int(ds[theirs]))
            fixed.add(ours)
        elif ours in explicit:
            fixed.add(ours)
    if "train_batch_size" in ds:
        reconcile_global_batch(args, int(ds["train_batch_size"]), fixed, path, world_size)
    ds["train_micro_batch_size_per_gpu"] = args.train_batch_size
    ds["gradient_accumulation_steps"] = args.gradient_accumulation_steps
    ds_prec = ("fp16" if ds.get("fp16", {}).get("enabled") else
               "bf16" if ds.get("bf16", ds.get("bfloat16", {})).get("enabled") else None)
    if ds_prec is not None:
        if "precision" in explicit and args.precision != ds_prec:
            raise TrainError(f"--precision {args.precision} conflicts with {path}, which enables "
                             f"{ds_prec}: drop one (the DeepSpeed config wins)")
        precision = ds_prec
    elif "precision" in explicit or precision != "fp32":
        if precision in ("bf16", "fp16"):
            ds[precision] = {"enabled": True}
    if precision == "fp16" and device != "cuda":
        raise TrainError(f"{path} asks for fp16, which DeepSpeed supports on CUDA only: "
                         "use bf16 or fp32 on CPU")
    opt = ds.get("optimizer", {}).get("type", "")
    if opt and device != "cuda" and opt.lower() in ("lamb", "onebitlamb", "fusedlamb"):
        raise TrainError(f"{path} names DeepSpeed's {opt} optimizer, a CUDA-only fused kernel: "
                         "remove the \"optimizer\" block to use the trainer's own LAMB")
    if not opt:  # ours is passed in; ZeRO wants to be told that is intended
        ds.setdefault("zero_allow_untested_optimizer", True)
    ds.setdefault("gradient_clipping", args.max_grad_norm)
    ds.setdefault("steps_per_print", 10 ** 9)  # we log ourselves
    return ds, precision


def disable_ds_shm_comm() -> None:
    """Skip DeepSpeed's CPU shared-memory all-reduce op, whose first use compiles C++ (~1-2 min).

    Gloo is used instead. No environment variable of DeepSpeed avoids the build (DS_BUILD_*
    only concern pre-building), so this edits its cached op-compatibility table; opt in with
    WIKI2BERT_DS_SHM=0 (the tests do, but for one run that checks the default build)."""
    import deepspeed.ops

    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False


# ---------------------------------------------------------------------------------------------
# Training


class Trainer:
    """Holds the model, optimizer, data and run state; `train()` runs the loop."""

    def __init__(self, args):
        import torch

        from trainer.checkpoint import CheckpointError, load_model_weights
        from trainer.data import ShardedTrainData, find_shards
        from trainer.distributed import init_distributed, resolve_device
        from trainer.logging_utils import setup_logging
        from trainer.model import BertConfig, BertForPreTraining
        from trainer.optim import build_optimizer, build_scheduler

        self.args = args
        try:
            device = resolve_device(args.device)
        except ValueError as exc:  # e.g. --device cuda without a GPU
            raise TrainError(str(exc)) from None
        precision = resolve_precision(args, device)
        ds_config = None
        if args.deepspeed:
            ds_config, precision = deepspeed_settings(args, precision, device)
        self.precision = precision
        try:
            self.bert_config = BertConfig.from_json_file(args.bert_config)
        except ValueError as exc:
            raise TrainError(str(exc)) from None
        if args.phase2 and not args.init_checkpoint:
            raise TrainError("--phase2 needs --init_checkpoint")
        self.phase = 2 if args.phase2 else 1
        if args.phase2:  # a bad --init_checkpoint is found before output_dir is created
            from trainer.checkpoint import resolve_model_file
            try:
                resolve_model_file(args.init_checkpoint)
            except CheckpointError as exc:
                raise TrainError(str(exc)) from None
        self.shards = find_shards(args.input_dir)
        if self.shards.seq_len > self.bert_config.max_position_embeddings:
            raise TrainError(f"the shards have seq_len {self.shards.seq_len} > the model's "
                             f"max_position_embeddings {self.bert_config.max_position_embeddings}")
        # Everything above is checked before any process group exists: all ranks fail alike.
        self.env = init_distributed(device, force=args.deepspeed)
        env = self.env
        setup_logging(env.is_main)
        self.out = Path(args.output_dir)
        latest = prepare_output_dir(args, self.phase, env.is_main)
        env.barrier()
        self.vocab_size = copy_vocab(args.vocab_file, self.bert_config.vocab_size, self.out,
                                     write=env.is_main)

        torch.manual_seed(args.seed)  # the same initial weights on every rank
        model = BertForPreTraining(self.bert_config)
        if self.phase == 2 and latest is None:
            try:
                src = load_model_weights(model, args.init_checkpoint)
            except CheckpointError as exc:
                raise TrainError(str(exc)) from None
            log.info("phase 2: weights from %s, fresh optimizer and schedule", src)
        model.to(env.device)
        self.model = model
        self.optimizer = build_optimizer(model, args.optimizer, args.learning_rate, args.weight_decay)
        make_sched = lambda opt: build_scheduler(opt, args.warmup_proportion, args.max_steps)  # noqa: E731
        self.scheduler = make_sched(self.optimizer)
        self.engine = None
        self.ddp = None
        if args.deepspeed:
            if os.environ.get("WIKI2BERT_DS_SHM") == "0":
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
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
        if args.deepspeed:
            self.autocast_dtype = None  # DeepSpeed converts the model itself

        self.step = 0
        self.trace = (open(self.out / f"data_trace_rank{env.rank}.txt", "a", encoding="utf-8")
                      if os.environ.get("WIKI2BERT_TRACE_DATA") == "1" else None)
        self.data = ShardedTrainData(self.shards.train, args.train_batch_size, args.seed,
                                     env.rank, env.world_size, vocab_size=self.bert_config.vocab_size)
        # Dropout streams differ per rank (never shared), fixed by the seed.
        torch.manual_seed(args.seed + 1_000_003 * (env.rank + 1))
        if latest is not None:
            self.resume(latest)

    # -- checkpoints -----------------------------------------------------------------------
    def _model_state(self, tmp_dir):
        import torch

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
        from trainer.checkpoint import save_checkpoint

        state = {"step": self.step, "loader": self.data.state_dict(), "phase": self.phase}
        if self.engine is None:
            state.update(optimizer=self.optimizer.state_dict(),
                         scheduler=self.scheduler.state_dict(), scaler=self.scaler.state_dict())
        path = save_checkpoint(self.out, self.step, self.env,
                               meta={"phase": self.phase, "bert_config": self.bert_config.to_dict()},
                               model_state_fn=self._model_state, trainer_state=state,
                               keep=self.args.keep_checkpoints, ds_engine=self.engine)
        log.info("checkpoint %s", path)

    def resume(self, ckpt):
        import torch

        from trainer.checkpoint import DS_TAG, load_trainer_state, read_meta, set_rng_state

        meta = read_meta(ckpt)
        state, rng = load_trainer_state(ckpt, self.env)
        if self.engine is not None:
            if not (ckpt / DS_TAG).is_dir():
                raise TrainError(f"{ckpt} was not written under --deepspeed: resume without it")
            self.engine.load_checkpoint(str(ckpt), tag=DS_TAG)
        else:
            if "optimizer" not in state:
                raise TrainError(f"{ckpt} was written under --deepspeed: resume with --deepspeed")
            self.model.load_state_dict(torch.load(ckpt / "model.pt", map_location="cpu", weights_only=True))
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
        import torch

        ctx = (torch.autocast(self.env.device.type, dtype=self.autocast_dtype)
               if self.autocast_dtype is not None else contextlib.nullcontext())
        with ctx:
            return module(**batch)

    def train_step(self, batches) -> tuple[float, float, float, float]:
        """One optimizer step over the micro-batches; returns (loss, mlm, nsp, grad_norm)."""
        import torch

        accum = len(batches)
        sums = torch.zeros(3, dtype=torch.float64)
        grad_norm = float("nan")
        for i, batch in enumerate(batches):
            if self.trace is not None:
                self._trace_rows(batch)
            batch = {k: v.to(self.env.device, non_blocking=True) for k, v in batch.items()}
            if self.engine is not None:
                out = self._forward(self.engine, batch)
                self.engine.backward(out.loss)  # DeepSpeed scales by 1/accum itself
                self.engine.step()              # steps only at the accumulation boundary
            else:
                last = i == accum - 1
                # the all-reduce runs only on the last micro-step
                sync = self.ddp.no_sync() if (self.ddp is not None and not last) else contextlib.nullcontext()
                with sync:
                    out = self._forward(self.ddp or self.model, batch)
                    self.scaler.scale(out.loss / accum).backward()
            sums += torch.tensor([out.loss.item(), out.mlm_loss.item(), out.nsp_loss.item()],
                                 dtype=torch.float64)
        if self.engine is not None:
            gn = self.engine.get_global_grad_norm()
            grad_norm = float(gn) if gn is not None else float("nan")
        else:
            self.scaler.unscale_(self.optimizer)
            if self.args.max_grad_norm > 0:
                grad_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(),
                                                                 self.args.max_grad_norm))
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
        loss, mlm, nsp = (sums / accum).tolist()
        return loss, mlm, nsp, grad_norm

    def _trace_rows(self, batch) -> None:
        """WIKI2BERT_TRACE_DATA=1: one hash per sample read (lets tests check ranks' data)."""
        import hashlib

        for row in batch["input_ids"].numpy():
            self.trace.write(hashlib.sha1(row.tobytes()).hexdigest()[:16] + "\n")
        self.trace.flush()

    @property
    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    # -- evaluation ------------------------------------------------------------------------
    def evaluate(self) -> dict:
        """MLM and NSP loss and accuracy on the held-out *test* shards (summed over ranks)."""
        import torch

        from trainer.data import eval_batches

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
                    out.nsp_loss.item() * b,
                    (out.nsp_logits.argmax(-1) == batch["next_sentence_labels"]).sum().item(), b,
                ], dtype=torch.float64)
        module.train()
        acc = self.env.all_reduce_sum(acc.to(self.env.device)).cpu()
        mlm_n, nsp_n = max(acc[2].item(), 1), max(acc[5].item(), 1)
        res = {"eval_mlm_loss": acc[0].item() / mlm_n, "eval_mlm_acc": acc[1].item() / mlm_n,
               "eval_nsp_loss": acc[3].item() / nsp_n, "eval_nsp_acc": acc[4].item() / nsp_n}
        res["eval_loss"] = res["eval_mlm_loss"] + res["eval_nsp_loss"]
        return res

    # -- the loop --------------------------------------------------------------------------
    def write_run_info(self):
        from pipeline.stage import write_json_atomic
        from trainer.logging_utils import write_git_info

        if not self.env.is_main:
            return
        hp = {k: v for k, v in vars(self.args).items()}
        hp.update(world_size=self.env.world_size, precision=self.precision, phase=self.phase,
                  global_batch_size=self.args.train_batch_size * self.args.gradient_accumulation_steps
                  * self.env.world_size, device=str(self.env.device),
                  train_files=len(self.shards.train), train_samples=self.data.order.total,
                  seq_len=self.shards.seq_len, max_pred=self.shards.max_pred,
                  git=write_git_info(self.out))
        write_json_atomic(self.out / "hparams.json", hp)
        write_json_atomic(self.out / "bert_config.json", self.bert_config.to_dict())

    def train(self) -> dict:
        import torch

        from trainer.logging_utils import MetricsLogger

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
        try:
            while self.step < end:
                batches = [next(it) for _ in range(accum)]
                lr = self.lr
                loss, mlm, nsp, gnorm = self.train_step(batches)
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
                    metrics.log(self.step, last)
                    log.info("step %d loss %.4f (mlm %.4f nsp %.4f) lr %.3g %.0f samples/s",
                             self.step, last["loss"], last["mlm_loss"], last["nsp_loss"], lr,
                             last["samples_per_sec"])
                    window.zero_()
                    window_steps, t0 = 0, time.perf_counter()
                if args.eval_every and self.shards.test and self.step % args.eval_every == 0:
                    ev = self.evaluate()
                    metrics.log(self.step, ev, prefix="eval")
                    log.info("step %d eval mlm %.4f (acc %.3f) nsp %.4f (acc %.3f)", self.step,
                             ev["eval_mlm_loss"], ev["eval_mlm_acc"], ev["eval_nsp_loss"],
                             ev["eval_nsp_acc"])
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


def run(args) -> dict:
    trainer = Trainer(args)
    try:
        return trainer.train()
    finally:
        trainer.env.shutdown()


def main(argv=None) -> int:
    try:
        args = parse_args(argv)  # before importing torch: --help and flag errors stay instant
        from trainer.checkpoint import CheckpointError
        from trainer.data import DataError
        from vocab.bert_tokenizer import VocabError

        user_errors = (ConfigError, TrainError, DataError, CheckpointError, VocabError)
        try:
            run(args)
        except user_errors as exc:
            raise TrainError(str(exc)) from exc
    except (ConfigError, TrainError) as exc:
        if os.environ.get("WIKI2BERT_TRACEBACK") == "1":
            raise
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Error: interrupted; rerun with --resume_from_checkpoint to continue from the last "
              "checkpoint", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
