"""The trainer's flags, and the JSON config file that gives the same keys (command line wins).

    args = parse_args(["--config_file", "trainer/configs/phase1_base.json", "--input_dir", "D",
                       "--output_dir", "O"])   # checked (trainer/config/checks.py); no torch
    args.explicit   # the keys set on the command line or in the config file (not defaults)

The namespace is what the user said; trainer/config/resolved.py turns it into the run's frozen
TrainConfig with every default resolved.

Flag names follow NVIDIA's and gpauloski's run_pretraining.py (underscores). A relative
`model_config` / `deepspeed_config` / `vocab_file` / `init_from` in a config file is looked up beside that
file first (so shipped configs work from any directory), then in the working directory.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from common.flags import close_flag
from trainer.config.checks import validate
from trainer.config.errors import ConfigError, read_json
from trainer.config.languages import normalise_alpha
from trainer.config.phases import parse_phases
from trainer.config.positions import add_position_flags
from trainer.models import describe, names

PATH_KEYS = ("model_config", "deepspeed_config", "vocab_file", "init_from", "phases")
# the old names of flags (and config-file keys), still taken: --bert_config is --model_config
ALIASES = {"bert_config": "model_config"}


class _Repeated(argparse.Action):
    """A repeatable flag (--input_dir LANG=DIR ...): the command line's values replace a config
    file's instead of adding to them."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = f"_{self.dest}_given"
        items = list(getattr(namespace, self.dest)) if getattr(namespace, given, False) else []
        setattr(namespace, given, True)
        setattr(namespace, self.dest, items + [values])


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of argparse's usage dump + exit 2
        raise ConfigError(f"{message}{close_flag(self, message)} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="run_pretraining.py", description="BERT pretraining on HDF5 shards.",
                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    a = p.add_argument
    a("--config_file", help="JSON file with any of these keys (underscore names); flags win")
    g = p.add_argument_group("model and data")
    g.add_argument("--model_config", "--bert_config", dest="model_config",
                   help="model JSON (vocab_size, hidden_size, ...), e.g. trainer/configs/bert_base.json "
                   "or, with --model_type modernbert, trainer/configs/modernbert_base.json; also a "
                   "transformers config.json (new weights of that architecture: the family from its "
                   "model_type unless --model_type says otherwise)")
    g.add_argument("--model_type", choices=names(), default="bert", help=describe())
    g.add_argument("--init_from", help="start from the weights and architecture of a transformers "
                   "folder (*ForMaskedLM, BertForPreTraining, a bare BertModel/XLMRobertaModel: its "
                   "missing head initialised) or of a wiki2bert run (output_dir or ckpt_* dir), with a "
                   "fresh optimizer and schedule (docs/training.md: Continued pretraining)")
    g.add_argument("--new_token_init", choices=("pieces", "random"), default="pieces",
                   help="with --init_from and another --vocab_file: a token the old vocabulary lacks "
                        "starts as the mean of its old pieces' rows (pieces) or at random (random, "
                        "the ablation); shared tokens keep their rows either way")
    g.add_argument("--vocab_file", help="the tokenizer the data was encoded with: vocab.txt (or its "
                   "folder) or a transformers tokenizer folder (tokenizer.json); copied into "
                   "output_dir. Default with --init_from: its own. With --init_from and another "
                   "tokenizer, the model's vocabulary is adapted to this one")
    g.add_argument("--input_dir", action=_Repeated, metavar="[LANG=]DIR",
                   help="folder of HDF5 shards, searched recursively: *training* files train, *test* "
                   "files evaluate. Several languages: LANG=DIR once per language (docs/training.md: "
                   "Several languages)")
    g.add_argument("--sampling_alpha", default="0.3",
                   help="with several languages: a language's share of the samples is proportional "
                   "to (its share of the training samples) ** alpha (1: as the data, 0: uniform); a "
                   "schedule: 0.7,0.5,0.3 (equal parts of max_steps) or 0.7@0,0.5@0.4,0.3@0.8 "
                   "(from a share of max_steps on)")
    g.add_argument("--phases", metavar="FILE",
                   help="sequence-length phases in one run: a JSON list of phases, each with input_dir "
                   "and share (of the steps or of --train_budget) and optionally seq_len, "
                   "train_batch_size, mlm_probability, learning_rate, global_rope_theta / "
                   "local_rope_theta (ModernBERT) or rope_theta; replaces --input_dir "
                   "(docs/training.md: Phases)")
    add_position_flags(g)   # --max_position_embeddings, --global_rope_theta ... (config/positions.py)
    g.add_argument("--output_dir", help="logs, configs and checkpoints go here")
    g = p.add_argument_group("objective and masking (docs/training.md: Masking)")
    g.add_argument("--masking", choices=("static", "dynamic"), default="static",
                   help="static: the masks in the HDF5 (NVIDIA's recipe); dynamic: new masks every "
                        "epoch from (seed, epoch, sample), the originals restored from the HDF5")
    g.add_argument("--mlm_probability", type=float, default=0.15,
                   help="share of the tokens masked (with --masking dynamic), at most the HDF5's "
                        "max_pred per row; by default the rate --input_dir was encoded with (its "
                        "encode's --masked-lm-prob, said in one log line), else 0.15")
    g.add_argument("--whole_word_masking", action="store_true",
                   help="mask a piece and the ## pieces after it together (with --masking dynamic)")
    g.add_argument("--mask_replace_prob", type=float, default=0.8,
                   help="share of the masked tokens replaced by [MASK] (with --masking dynamic)")
    g.add_argument("--random_replace_prob", type=float, default=0.1,
                   help="share of the masked tokens replaced by a random piece; the rest stay "
                        "(with --masking dynamic)")
    g.add_argument("--doc_attention", choices=("within", "across"), default=None,
                   help="packed rows: attention within each document (the default where the files "
                        "mark where documents start, `encode --pack`'s doc_starts) or across the "
                        "whole row (the default for files without the marks, and rows of sentence "
                        "pairs; docs/training.md: Long context)")
    g.add_argument("--no_nsp", action="store_true",
                   help="masked LM only (RoBERTa): no next-sentence loss, the NSP head stays as "
                        "initialised")
    g = p.add_argument_group("optimisation")
    g.add_argument("--train_batch_size", type=int, default=32, help="per rank, per micro-step")
    g.add_argument("--gradient_accumulation_steps", type=int, default=1,
                   help="micro-steps per optimizer step (gradients all-reduced on the last only)")
    g.add_argument("--tokens_per_step", type=int, default=None,
                   help="size each optimizer step in tokens (over all ranks, the same in every phase): "
                   "each phase's rows a rank from it and its seq_len, the micro-batch at most "
                   "--train_batch_size (on CUDA, when that is not given: the largest the card takes, "
                   "trainer/runtime/card.py), gradient accumulation making up the rest "
                   "(docs/training.md: A step in tokens)")
    g.add_argument("--learning_rate", type=float, default=6e-3, help="peak learning rate")
    g.add_argument("--warmup_proportion", type=float, default=0.01,
                   help="share of max_steps of linear warmup, then polynomial decay to 0")
    g.add_argument("--max_steps", type=int, default=1000, help="optimizer steps the schedule plans for")
    g.add_argument("--train_budget", default=None,
                   help="wall-clock budget, e.g. 30m, 2h, 1d: the first steps are timed and "
                        "max_steps is planned from it, and re-planned when the pace drifts (the "
                        "plan and the time spent kept in the checkpoint for resumes)")
    g.add_argument("--budget_replan", action=argparse.BooleanOptionalAction, default=True,
                   help="with --train_budget: move the end (wsd: the decay's start) when the measured "
                        "pace drifts, so that the run ends on time; --no-budget_replan keeps the "
                        "first plan's steps")
    g.add_argument("--lr_schedule", choices=("poly", "linear", "wsd"), default="poly",
                   help="after the warmup: poly (NVIDIA's, degree 0.5), linear to 0, or wsd "
                        "(stable at the peak, then linear to 0 over the last --decay_proportion)")
    g.add_argument("--decay_proportion", type=float, default=0.2,
                   help="share of max_steps of the final decay of --lr_schedule wsd")
    g.add_argument("--steps_this_run", type=int, default=None,
                   help="stop after this many steps of this run (the schedule still plans max_steps)")
    g.add_argument("--optimizer", choices=("lamb", "adamw"), default="lamb",
                   help="LAMB (NVIDIA's recipe, large batches) or AdamW")
    g.add_argument("--weight_decay", type=float, default=0.01,
                   help="decoupled weight decay (not on biases and LayerNorm)")
    g.add_argument("--max_grad_norm", type=float, default=1.0, help="0 disables clipping")
    g.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default=None,
                   help="default: bf16 on CUDA, fp32 on CPU")
    g.add_argument("--seed", type=int, default=42,
                   help="seed of the initial weights, the data order and dropout")
    g = p.add_argument_group("speed (default: on for CUDA in bf16 without DeepSpeed, where "
                             "measured faster; off elsewhere: trainer/runtime/speed.py)")
    g.add_argument("--torch_compile", action=argparse.BooleanOptionalAction, default=None,
                   help="torch.compile each encoder layer (the first steps pay the compile)")
    g.add_argument("--unpad", action=argparse.BooleanOptionalAction, default=None,
                   help="drop the padding tokens before the encoder and restore them after "
                        "(flash varlen attention on CUDA)")
    g = p.add_argument_group("run")
    g.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: cuda when present")
    g.add_argument("--log_every", type=int, default=10,
                   help="log the mean training loss every N steps and at the last one")
    g.add_argument("--eval_every", type=int, default=0,
                   help="evaluate every N steps and at the last one (0: no evaluation)")
    g.add_argument("--eval_batch_size", type=int, default=None, help="default: train_batch_size")
    g.add_argument("--eval_max_samples", type=int, default=10000,
                   help="evaluate on the first N held-out samples")
    g.add_argument("--checkpoint_every", type=int, default=200,
                   help="write a checkpoint every N steps and at the last one")
    g.add_argument("--keep_checkpoints", type=int, default=3, help="keep the last K checkpoints")
    g.add_argument("--resume_from_checkpoint", action="store_true",
                   help="continue from the newest complete checkpoint in output_dir (if any)")
    g.add_argument("--phase2", action="store_true", help="start from --init_checkpoint with a fresh "
                   "optimizer and schedule (use the seq 512 shards)")
    g.add_argument("--init_checkpoint", help="phase-1 output_dir, checkpoint dir or model.pt")
    g.add_argument("--tensorboard", action=argparse.BooleanOptionalAction, default=True,
                   help="also write TensorBoard event files (output_dir/tensorboard)")
    g.add_argument("--deepspeed", action="store_true", help="wrap the model with deepspeed.initialize")
    g.add_argument("--deepspeed_config", help="DeepSpeed JSON, e.g. trainer/configs/ds_zero1.json")
    g.add_argument("--local_rank", "--local-rank", type=int, default=None,
                   help=argparse.SUPPRESS)  # passed by the deepspeed launcher; LOCAL_RANK env wins
    return p


def _read_config_file(path: str) -> dict:
    cfg = read_json(path, "--config_file")
    if not isinstance(cfg, dict):
        raise ConfigError(f"--config_file {path}: expected a JSON object of flag names")
    return cfg


def _check_types(parser, cfg: dict, source: str) -> dict:
    actions = {a.dest: a for a in parser._actions}
    out = {}
    for key, value in cfg.items():
        if key.startswith("_"):  # comments
            continue
        action = actions.get(key)
        if key in ALIASES:   # an old name
            key = ALIASES[key]
            action = actions.get(key)
        if action is None or key in ("config_file", "help", "local_rank"):
            keys = [k for k in actions if k not in ("config_file", "help", "local_rank")]
            close = difflib.get_close_matches(key, keys, n=1, cutoff=0.75)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{source}: unknown key {key!r}; {hint}keys are the flag names without "
                              "dashes (see --help)")
        if key == "input_dir":   # a folder, ["LANG=DIR", ...] or {"LANG": DIR}: checked by validate
            ok = isinstance(value, (str, list, dict))
        elif key == "phases":    # the list, or a file that holds it: checked by validate
            ok = isinstance(value, (str, list))
        elif key == "sampling_alpha":   # 0.3 or "0.7,0.5,0.3"
            value = normalise_alpha(value)
            ok = True
        elif isinstance(action, (argparse._StoreTrueAction, argparse.BooleanOptionalAction)):
            ok = isinstance(value, bool)
        elif action.type is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif action.type is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = value is None or isinstance(value, str)
        if not ok or (action.choices and value not in action.choices):
            raise ConfigError(f"{source}: key {key!r} has a bad value {value!r}"
                              + (f" (one of {', '.join(action.choices)})" if action.choices else ""))
        out[key] = value
    return out


def _resolve_relative(cfg: dict, base: Path, source: str) -> dict:
    for key in PATH_KEYS:
        value = cfg.get(key)
        if isinstance(value, str) and not os.path.isabs(value) and (base / value).exists():
            cfg[key] = str(base / value)
    if isinstance(cfg.get("phases"), list):   # each phase's folder beside the file first
        cfg["phases"] = parse_phases(cfg["phases"], source=source, base=base)
    return cfg


def parse_args(argv=None) -> argparse.Namespace:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    first = parser.parse_args(argv)
    explicit = {a.dest for a in parser._actions if a.dest != "help"
                and getattr(first, a.dest) != a.default}
    if first.config_file:
        cfg = _check_types(parser, _read_config_file(first.config_file), first.config_file)
        cfg = _resolve_relative(cfg, Path(first.config_file).resolve().parent,
                                f"--config_file {first.config_file}")
        parser.set_defaults(**cfg)
        explicit |= set(cfg)
    args = parser.parse_args(argv)
    if hasattr(args, "_input_dir_given"):
        del args._input_dir_given
    # a flag repeated with its default value on the command line is explicit too
    explicit |= {a.dest for a in parser._actions
                 if any(x == s or x.startswith(s + "=") for x in argv for s in a.option_strings)}
    args.explicit = sorted(explicit)
    validate(args)
    return args
