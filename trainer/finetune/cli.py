"""The command line of `python -m trainer.finetune` (usage in trainer/finetune/__main__.py)."""
from __future__ import annotations

import argparse
from pathlib import Path

from common.flags import HintingParser
from trainer.finetune.probe_dir import ProbeMissing, probe_files
from trainer.finetune.task_table import TASK_NAMES, TASKS


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give integers separated by commas, e.g. 1,2,3") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more distinct integers")
    return seeds


def parse_learning_rates(text: str) -> list[float]:
    """One learning rate, or a comma-separated grid chosen from on the validation split."""
    try:
        rates = [float(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number or numbers separated by commas, "
                                         "e.g. 1e-4,3e-4,1e-3") from None
    if not rates or min(rates) <= 0 or len(set(rates)) != len(rates):
        raise argparse.ArgumentTypeError(f"{text!r}: give distinct rates above 0")
    return rates


def positive(kind):
    def check(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
        return value
    return check


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 (all) or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    # a mistake is one line with the flag or choice meant, as the trainer's and the pipeline's
    p = HintingParser(
        prog="python -m trainer.finetune",
        description="Fine-tune and evaluate a BERT on a task (or on the dump's own probe), over "
                    "seeds, beside the same architecture from random weights.")
    src = p.add_argument_group("model")
    src.add_argument("--model", help="exported Hugging Face folder, trainer --output_dir (its "
                     "newest complete checkpoint) or one checkpoints/ckpt_* dir")
    src.add_argument("--run", help="trainer --output_dir: fine-tune its checkpoints (see --every)")
    src.add_argument("--every", type=positive(int), default=1,
                     help="with --run: every N-th checkpoint, oldest first; the newest always "
                          "(default 1: all)")
    data = p.add_argument_group("data")
    data.add_argument("--task", choices=TASK_NAMES, help=", ".join(
        f"{t.name} ({t.scored_by})" for t in TASKS.values()) + "; --probe implies ner")
    data.add_argument("--probe", help="DATA_DIR/LANG: the probe `pipeline probe` wrote there "
                      "(probe/train.conll, dev.conll, test.conll)")
    data.add_argument("--test_probe", help="with --probe: test on this DATA_DIR/LANG's probe instead "
                      "(cross-lingual transfer: fine-tuned on one language's probe, tested on "
                      "another's; the model must read both languages)")
    data.add_argument("--dataset", help="a dataset that `datasets` opens: a Hub name (e.g. "
                      "unimelb-nlp/wikiann), a folder with a README card and data/, or a "
                      "save_to_disk folder; the task and columns are found from its features")
    data.add_argument("--dataset_config", default=None,
                      help="with --dataset: its configuration, e.g. hu for WikiANN, hu_szeged for UD")
    for part in ("train", "validation", "test"):
        data.add_argument(f"--{part}_split", default=None,
                          help=f"with --dataset: the split to use as {part} (default {part}"
                               + ("; none where the dataset has none)" if part == "test" else ")"))
    data.add_argument("--suite", help="a language code (suites.json: e.g. hu runs WikiANN hu and "
                      "UD hu_szeged UPOS) or a suite FILE (JSON): every task over the seeds, one "
                      "table in OUTPUT_DIR/suite.md and suite.json")
    data.add_argument("--compare", nargs="+", metavar="MODEL", default=(),
                      help="other models (a Hub name or a folder) fine-tuned with the same recipe, "
                           "rows and seeds, beside --model in the suite's table")
    data.add_argument("--train_file", help="training data (CoNLL, CoNLL-U, CSV/TSV/JSONL, SQuAD JSON)")
    data.add_argument("--validation_file", help="development data, same format")
    data.add_argument("--test_file", help="test data; scores are reported on it "
                      "(on the validation file where there is none)")
    data.add_argument("--data_format", choices=("conll", "conllu", "csv", "tsv", "jsonl"),
                      help="file format (default: from the file suffix)")
    data.add_argument("--tag_column", default=None, help="ner/pos: the tag column, a CoNLL-U "
                      "name (upos, xpos, deprel...) or a 0-based index (default: upos; last column "
                      "of a CoNLL file)")
    data.add_argument("--text_column", default=None,
                      help="classify: text column (default text; with --dataset found from the features)")
    data.add_argument("--text_pair_column", default=None,
                      help="classify: second text column, for pairs (default: single texts)")
    data.add_argument("--label_column", default=None,
                      help="classify: label column (default label; with --dataset found from the features)")
    data.add_argument("--language", default=None, help="qa: the data's language code; "
                      "'en' selects the official SQuAD answer normaliser")
    data.add_argument("--answer_normalizer", choices=("squad", "language-neutral"), default=None,
                      help="qa: answer normaliser for EM/F1 (default: squad for --language en, "
                           "else language-neutral)")
    data.add_argument("--doc_stride", type=positive(int), default=128,
                      help="qa: overlap between windows of a long context, in pieces (default 128)")
    train = p.add_argument_group("training")
    train.add_argument("--output_dir", required=True,
                       help="where results.json, predictions/ and runs/ go")
    train.add_argument("--seeds", type=parse_seeds, default=[1],
                       help="comma-separated seeds, e.g. 1,2,3 (mean ± sd; default 1)")
    train.add_argument("--baseline", choices=("random-init",), default=None,
                       help="also fine-tune the same architecture from random weights")
    train.add_argument("--epochs", type=positive(float), default=3.0, help="default 3")
    train.add_argument("--learning_rate", type=parse_learning_rates, default=[5e-5],
                       help="default 5e-5; a grid such as 1e-4,3e-4,1e-3 is tried with the first "
                            "seed and the rate with the best validation score is used for every "
                            "seed, chosen for each variant (pretrained, random init) on its own")
    train.add_argument("--batch_size", type=positive(int), default=32, help="default 32")
    train.add_argument("--max_train_examples", type=non_negative_int, default=None,
                       help="train on at most N rows (a sentence, a text, a question window), "
                            "the same seeded subset for every seed and variant; 0: all "
                            "(default: 2000 on CPU, where a seed then takes minutes, all on a GPU)")
    train.add_argument("--max_seq_length", type=positive(int), default=None,
                       help="pieces per row (default 128, 384 for qa; at most the model's "
                            "max_position_embeddings)")
    train.add_argument("--warmup_ratio", type=float, default=0.1, help="default 0.1")
    train.add_argument("--weight_decay", type=float, default=0.01, help="default 0.01")
    train.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda if present)")
    return p


def resolve_files(args, parser) -> dict[str, Path | None]:
    """{"train", "validation", "test"} paths from --probe or the --*_file options ({} for
    --dataset and --suite, read later)."""
    given = [flag for flag, on in (("--probe", args.probe), ("--dataset", args.dataset),
                                   ("--suite", args.suite), ("--train_file", args.train_file))
             if on]
    if len(given) > 1:
        parser.error(f"give one of {', '.join(given)}, not several")
    if args.dataset or args.suite:
        if args.validation_file or args.test_file:
            parser.error("--validation_file/--test_file go with --train_file, not with "
                         f"{given[0]} (name its splits with --validation_split/--test_split)")
        if args.suite and (args.task or args.dataset_config):
            parser.error("--suite says each task's dataset and task: leave --task and "
                         "--dataset_config out")
        return {}
    if args.dataset_config or args.train_split or args.validation_split or args.test_split:
        parser.error("--dataset_config and --*_split go with --dataset")
    if args.probe:
        if args.task not in (None, "ner"):
            parser.error("--probe is a ner task: leave --task out or give --task ner")
        if args.train_file or args.validation_file or args.test_file:
            parser.error("give either --probe or --train_file/--validation_file, not both")
        args.task = "ner"
        try:
            files = probe_files(args.probe)
            if args.test_probe:   # cross-lingual transfer: another language's test split
                files["test"] = probe_files(args.test_probe)["test"]
        except ProbeMissing as exc:
            parser.exit(1, f"Error: {exc}\n")
        return files
    if args.test_probe:
        parser.error("--test_probe goes with --probe (train on one probe, test on another's)")
    if args.task is None:
        parser.error(f"give --task ({', '.join(TASK_NAMES)}) or --probe DATA_DIR/LANG")
    if not args.train_file or not args.validation_file:
        parser.error("give --train_file and --validation_file (or --probe DATA_DIR/LANG)")
    files = {"train": Path(args.train_file), "validation": Path(args.validation_file),
             "test": Path(args.test_file) if args.test_file else None}
    for name, f in files.items():
        if f is not None and not f.is_file():
            parser.exit(1, f"Error: --{name}_file {f} does not exist\n")
    return files


def parse(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if bool(args.model) == bool(args.run):
        parser.error("give --model PATH, or --run RUN_DIR to follow a run's checkpoints")
    if args.every != 1 and not args.run:
        parser.error("--every goes with --run RUN_DIR")
    if (args.compare or args.suite) and args.run:
        parser.error("--suite and --compare go with --model (the models are fine-tuned side by "
                     "side), not --run")
    args.files = resolve_files(args, parser)
    if args.max_seq_length is None and args.task is not None:
        args.max_seq_length = TASKS[args.task].max_length
    return args
