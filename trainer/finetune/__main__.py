"""Fine-tune and evaluate a model: is the BERT you made any good?

    python -m trainer.finetune --model PATH --task {ner,pos,classify,qa} \
        --train_file F --validation_file F [--test_file F] --output_dir O \
        [--seeds 1,2,3] [--baseline random-init] [--epochs N] [--learning_rate X] \
        [--batch_size N] [--max_seq_length N] [--max_train_examples N]
    python -m trainer.finetune --model PATH --probe DATA_DIR/LANG --output_dir O ...
    python -m trainer.finetune --run RUN_DIR --every N --probe DATA_DIR/LANG --output_dir O ...
    python -m trainer.finetune --model PATH --dataset NAME_OR_DIR [--dataset_config CFG] \
        [--train_split S] [--validation_split S] [--test_split S] --output_dir O ...
    python -m trainer.finetune --model PATH --suite LANG_OR_FILE [--compare MODEL ...] --output_dir O ...

PATH is an exported Hugging Face folder, a trainer --output_dir (its newest complete
checkpoint) or one checkpoints/ckpt_* dir. --probe fine-tunes on the tagging task that
`pipeline probe` built from the dump's own links. --baseline random-init trains the same
architecture from random weights with the same settings: the reference that says whether
pretraining helped. --dataset reads any dataset `datasets` opens (a Hub name, a folder in the
Hub's layout, a save_to_disk folder), its task and columns found from its features; --suite
runs a language's benchmarks (trainer/finetune/suites.json) or a suite FILE, with --compare's
models fine-tuned the same way, into one table (O/suite.md, O/suite.json).
O/results.json holds task, metric, and pretrained / random_init each with
mean, sd and one score per seed (on the test file; the validation file where there is none);
O/predictions/ the predictions of each seed; O/runs/ one record per finished seed, so an
interrupted run resumes (Ctrl-C is one line saying so). It starts with a line saying what it
trains (rows, seeds, runs, steps), shows each seed's progress (tqdm on a terminal, a plain line
every 30 s in a log file) and one line per finished or reused seed with the time left; the
same lines go to O/finetune.log. On CPU it trains on at most 2,000 rows unless
--max_train_examples says otherwise. `python -m trainer.finetune --help` lists every option.
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from common.interrupt import say_interrupted

# Before torch loads OpenMP: its threads sleep when they wait instead of spinning. Spinning
# threads collapse when another process takes a core: on 2 shared cores the same fine-tuning
# ran at 8-15 examples/s beside one busy process (71-118 alone), at 29-34 with passive waits;
# that is the 31-405 examples/s spread within one run (issue 38). OMP_WAIT_POLICY=active wins back
# a little on an idle machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def output_bytes(args) -> int:
    """What --output_dir receives, over: each (variant, seed, checkpoint)'s predictions (about
    the evaluated file's size, twice for safety), the seed records and results.json."""
    # torch (runner): loaded after OMP_WAIT_POLICY above is set, and never for --help
    from trainer.checkpoint import list_checkpoints
    from trainer.finetune.runner import select_checkpoints

    files = args.files
    evaluated = files.get("test") or files.get("validation")
    size = evaluated.stat().st_size if isinstance(evaluated, Path) and evaluated.is_file() else 0
    runs = len(args.seeds) * (2 if args.baseline else 1)
    if args.run:
        runs *= max(len(select_checkpoints(list_checkpoints(args.run), args.every)), 1)
    return runs * (2 * size + (8 << 10)) + (256 << 10)


def main(argv=None) -> int:
    from trainer.finetune.cli import parse  # after OMP_WAIT_POLICY above is set (its tasks load numpy)

    args = parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        return _run(args)
    except KeyboardInterrupt:   # one line, not the loop's traceback
        say_interrupted(f"Interrupted: the finished seeds are kept in {args.output_dir}/runs; "
                        "rerun the same command to train only the missing ones")
        return 130


def log_to_file(args) -> None:
    """The same lines as stderr, appended to OUTPUT_DIR/finetune.log (the start line names it)."""
    path = Path(args.output_dir) / "finetune.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return   # the disk check below says what is wrong with the folder
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logging.getLogger("trainer.finetune").addHandler(handler)
    args.log_file = path


def _run(args) -> int:
    # torch and transformers: loaded after OMP_WAIT_POLICY above is set, and never for --help
    from common.os_errors import DiskSpaceError, check_free_space, os_error_message
    from trainer.export import ExportError
    from trainer.finetune.hf_datasets import dataset_task
    from trainer.finetune.plan import default_length, summary_line
    from trainer.finetune.readers import FinetuneDataError
    from trainer.finetune.runner import finetune_model, finetune_run
    from trainer.finetune.source import quiet_transformers
    from trainer.finetune.suite import run_suite
    from trainer.finetune.tasks import make_task

    quiet_transformers()
    try:
        if args.suite or args.compare:
            return run_suite(args, log_to_file)
        # the data first: bad input leaves nothing in --output_dir, not even the log
        task = dataset_task(args) if args.dataset else make_task(args.task, args.files, args)
        if args.max_seq_length is None:
            args.max_seq_length = default_length(task.name)
        # refuse before the training time is spent, not at the first prediction file, and
        # before anything (the log) is written there
        check_free_space(args.output_dir, output_bytes(args), "the predictions and results")
        log_to_file(args)
        for note in task.notes:
            logging.getLogger("trainer.finetune").info("note: %s", note)
        if args.run:
            results = finetune_run(args.run, task, args, args.output_dir)
        else:
            results = finetune_model(args.model, task, args, args.output_dir)
    except (FinetuneDataError, ExportError, DiskSpaceError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except OSError as e:   # a full or read-only disk, a permission: which file, what to do
        print(f"Error: {os_error_message(e, where='--output_dir')}", file=sys.stderr)
        return 1
    print(summary_line(results))
    print(f"results: {args.output_dir}/results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
