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

    # the modern recipe (docs/training.md): packed rows, ModernBERT, 30% masks, a time budget
    torchrun --nproc_per_node=8 trainer/run_pretraining.py --model_type modernbert \\
        --model_config trainer/configs/modernbert_base.json --no_nsp --masking dynamic \\
        --mlm_probability 0.3 --train_budget 2h --lr_schedule wsd --input_dir data/hu/hdf5_..._packed/ ...

    # continued pretraining of an existing model (docs/training.md): its weights, architecture
    # and tokenizer from a transformers folder (or a wiki2bert run); --vocab_file NEW adapts its
    # vocabulary to another tokenizer
    torchrun --nproc_per_node=8 trainer/run_pretraining.py --init_from models/xlm-roberta-base \
        --masking dynamic --optimizer adamw --learning_rate 5e-5 --warmup_proportion 0.06 \
        --lr_schedule linear --input_dir data/hu/hdf5_..._tok-... --output_dir runs/hu_xlmr

    # several languages in one model (docs/training.md: Several languages): each language's
    # HDF5 folder with its code, sampled by (its share of the samples) ** alpha, annealed
    torchrun --nproc_per_node=8 trainer/run_pretraining.py --config_file ... \
        --input_dir hr=data/hr/hdf5_... --input_dir sr=data/sr/hdf5_... \
        --sampling_alpha 0.7,0.5,0.3 --vocab_file data/multi/bs+hr+sr/vocab --output_dir runs/hbs

    # sequence-length phases in one run (docs/training.md: Phases): 128 -> 1,024 -> 8,192 tokens,
    # each phase its own data, batch and RoPE theta, under one schedule and one budget
    torchrun --nproc_per_node=8 trainer/run_pretraining.py \
        --config_file trainer/configs/phases_long.json --vocab_file data/hu/vocab \
        --train_budget 24h --output_dir runs/hu_long          # or --phases FILE

    # resume after an interruption: the same command plus --resume_from_checkpoint
    # train longer (wsd): the same command with the new total (--train_budget 6h or --max_steps N)
    # plus --extend: from the last checkpoint before the decay, the decay redone at the new end
    # DeepSpeed: add --deepspeed --deepspeed_config trainer/configs/ds_zero1.json

Every flag is also a key of the JSON --config_file (the command line wins); see --help.
`--train_batch_size` is per rank and micro-step: the global batch is
train_batch_size x gradient_accumulation_steps x ranks. Or size the step in tokens:
`--tokens_per_step N` (the same N tokens a step in every phase, each phase's micro-batch at most
--train_batch_size, on CUDA by default the card's, accumulation making up the rest; one log line
a phase says it; docs/training.md: A step in tokens).
Writes to output_dir: hparams.json (the resolved config, at the run's first start; each resume
appends a line to resumes.jsonl), model_config.json, the tokenizer (vocab.txt +
tokenizer_config.json, or its kind's files), train_log.jsonl, tensorboard/, git_diff.patch (if the checkout is dirty)
and checkpoints/ckpt_{step:08d}/ (see trainer/checkpoint/layout.py). Bad input ends with one
`Error: ...` line and exit status 1; under torchrun rank 0 prints it and torchrun's closing
summary repeats it (trainer/errors.py). So does a fault of the OS (a full or read-only disk,
a permission, an I/O error), and a disk too small for --keep_checkpoints + 1 checkpoints is
refused before the first step (trainer/checkpoint/space.py; docs/reliability.md).

Environment:
    WIKI2BERT_TRACEBACK=1   show the traceback of an `Error: ...` too
    WIKI2BERT_QUIET_INTERRUPT=1  no line after Ctrl-C: the wrapper that runs it (make demo,
                            make pretrain) says what to rerun (common/interrupt.py)
    WIKI2BERT_DS_SHM=0      under --deepspeed on CPU, skip DeepSpeed's shared-memory all-reduce
                            op (its first use compiles C++ for 1-2 minutes) and use gloo

This file is the entry: it reads the flags into the run's frozen config (trainer/config/),
builds a Trainer (trainer/loop.py, its parts from trainer/start/parts.py) and trains. The model
families are trainer/models/, the data trainer/data/, checkpoints trainer/checkpoint/, and
what a run needs around them (processes, DeepSpeed, speed defaults, the budget, the output
dir) trainer/runtime/.
"""
from __future__ import annotations

import os
import signal
import sys

if __package__ in (None, ""):  # run by path: the repo root importable instead of this folder,
    # whose rooms (config/, data/, models/ ...) would shadow any package of the same name
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    sys.path.insert(0, os.path.dirname(_here))

from common.interrupt import say_interrupted  # noqa: E402
from trainer.config import ConfigError, parse_args  # noqa: E402
from trainer.errors import PEER_LOST, TrainError, os_fault_line, peer_lost, show_error  # noqa: E402

_INTERRUPTED = []


def _on_sigint(signum, frame):
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def interrupted() -> bool:
    return bool(_INTERRUPTED)


def main(argv=None) -> int:
    before = signal.getsignal(signal.SIGINT)
    if before is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)   # remember it: a collective may fail first
    try:
        return _run(argv)
    finally:
        if before is signal.default_int_handler:
            signal.signal(signal.SIGINT, before)


def _run(argv) -> int:
    try:
        args = parse_args(argv)  # before importing torch: --help and flag errors stay instant
        from trainer.checkpoint.layout import CheckpointError
        from trainer.checkpoint.space import check_run_space
        from trainer.config import resolve_config
        from trainer.data.shards import DataError
        from trainer.loop import Trainer
        from vocab.core.layout import VocabError

        user_errors = (ConfigError, TrainError, DataError, CheckpointError, VocabError)
        try:
            trainer = Trainer(resolve_config(args))
            try:   # refuse now, not at a checkpoint hours later
                check_run_space(trainer.config, trainer.out, trainer.env, trainer.checkpoint_bytes(),
                                trainer.plan.max_steps)
                trainer.train()
            finally:
                trainer.env.shutdown()
        except user_errors as exc:
            raise TrainError(str(exc)) from exc
        except OSError as exc:   # the OS refused a read or write: disk full, read-only, ...
            raise TrainError(os_fault_line(exc, args)) from exc
        except RuntimeError as exc:
            if interrupted():   # a collective cut short by Ctrl-C: the interrupt, not a fault
                raise KeyboardInterrupt from None
            if not peer_lost(exc):
                raise
            # another rank failed and wrote why to torchrun's error file (its summary quotes
            # it): rank 0 says where to look, on stderr only, and the others stay quiet
            if os.environ.get("RANK", "0") == "0":
                print(f"Error: {PEER_LOST}", file=sys.stderr, flush=True)
            return 1
    except (ConfigError, TrainError) as exc:
        if os.environ.get("WIKI2BERT_TRACEBACK") == "1":
            raise
        show_error(str(exc))   # once (rank 0), and in torchrun's error file for its summary
        return 1
    except KeyboardInterrupt:   # Ctrl-C reaches every rank: rank 0 alone says it
        if os.environ.get("RANK", "0") == "0":
            say_interrupted("Error: interrupted; rerun with --resume_from_checkpoint to continue "
                            "from the last checkpoint")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
