"""The commands `make pretrain` (recipes/pretrain.py) runs, built here, so that its run and its
--dry-run (recipes/pretrain_plan.py) say the same commands.

    pipeline(a, "shard")                 # [python, -m, pipeline, --data-dir, D, --lang, L, shard]
    encode(a, 128, 40)                   # the packed encode of the recipe
    cmd, env = train_command(a, "cuda", 1, model_file, vocab, hdf5, out, tokens=131072)
    heldout_command(hf, hdf5, "cuda")    # and export_command, fill_mask_command, context_command
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from pipeline.core.registry import pipeline_stages
from recipes.commands import torchrun_prefix

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "trainer" / "configs"
MODELS = {"cpu": CONFIGS / "modernbert_small.json", "cuda": CONFIGS / "modernbert_base.json"}
PACKED = {"max_seq": 128, "max_pred": 40, "masked_lm_prob": 0.3, "dupe_factor": 1}
# 30% dynamic masks with BERT's 80/10/10 split (the trainer's default), as ModernBERT's own
# collator: mask-only masking stalled at word frequencies on a small budget (issue 56)
RECIPE = ["--model_type", "modernbert", "--no_nsp", "--masking", "dynamic", "--mlm_probability",
          "0.3", "--optimizer", "adamw", "--lr_schedule", "wsd", "--warmup_proportion", "0.06", "--eval_every", "200",
          "--eval_max_samples", "2000", "--checkpoint_every", "200", "--keep_checkpoints", "2",
          "--log_every", "20"]
LEARNING_RATE = {"cpu": "1e-3", "cuda": "8e-4"}   # bench_recipes.py; docs/training.md for base
TEXT_STAGES = ("download", "extract", "format", "split", "filter")
# the model the run is asked to start, its vocab_size fitted to vocab.txt (in RUNS/LANG_modern/); not
# model_config.json, which the trainer writes there as it starts the model and checks a resume against
RUN_MODEL = "recipe_model.json"


def pipeline(a, *args) -> list:
    cmd = [sys.executable, "-m", "pipeline", "--data-dir", a.data_dir, "--lang", a.lang]
    return cmd + (["--workers", a.workers] if a.workers else []) + [str(x) for x in args]


def text_stage(a, stage: str) -> list:
    first = stage == "download"
    return pipeline(a, stage, *(["--dump", a.dump] if a.dump and first else []),
                    *(["--allow-unknown-lang"] if a.allow_unknown_lang and first else []), *forced(a))


def encode(a, max_seq: int, max_pred: int) -> list:
    return pipeline(a, "encode", "--pack", "--max-seq", max_seq, "--max-pred", max_pred, "--masked-lm-prob",
                    PACKED["masked_lm_prob"], "--dupe-factor", PACKED["dupe_factor"], *forced(a))


def forced(a) -> list[str]:
    return ["--force"] if a.force else []


def later_stages() -> list[str]:
    """What `pipeline run` runs after the text, but the encode (ours is packed): each on its
    own, so that --force redoes each stage once."""
    skip = set(TEXT_STAGES) | {"ingest", "dedup", "encode"}   # ingest, dedup: other corpora
    return [s.name for s in pipeline_stages() if s.name not in skip]


def run_batch(a, device: str) -> int | None:
    """--train_batch_size: --batch-size, else 32 on CPU, else None (a GPU's micro-batch: the card's)."""
    return a.batch_size or (None if device == "cuda" else 32)


def train_command(a, device: str, ranks: int, model_file: Path, vocab: Path, hdf5: list[Path], out: Path,
                  tokens: int | None) -> tuple[list, dict]:
    """(the training command, its environment); with --long it reads out/phases.json."""
    batch = run_batch(a, device)
    data = ["--phases", out / "phases.json"] if a.long else ["--input_dir", hdf5[0]]
    cmd = torchrun_prefix(ranks) + [
        "trainer/run_pretraining.py", "--model_config", model_file, *data,
        "--vocab_file", vocab, "--output_dir", out, "--train_budget", a.budget,
        "--learning_rate", LEARNING_RATE[device], *(["--train_batch_size", batch] if batch else []),
        *(["--tokens_per_step", tokens] if tokens else []), "--resume_from_checkpoint", *RECIPE]
    env = {}
    if device == "cpu":
        cmd += ["--device", "cpu", "--precision", "fp32", "--no-tensorboard"]
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // ranks))
    return cmd, env


def export_command(out: Path, hf: Path) -> list:
    return [sys.executable, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf]


def heldout_command(hf: Path, hdf5: Path, device: str, max_tokens: int | None = None) -> list:
    """What the held-out step says it runs (it runs recipes/heldout_mlm.py in this process); with
    `max_tokens`, the sample it measures (0: every held-out row)."""
    sample = ["--max-tokens", max_tokens] if max_tokens is not None else []
    return [sys.executable, "scripts/heldout_mlm.py", hf, hdf5, *sample, "--device", device]


def fill_mask_command(hf: Path, sentences: list, device: str) -> list:
    return [sys.executable, "scripts/fill_mask.py", hf, *sentences, "--device", device]


def context_command(hf: Path, hdf5: Path, device: str) -> list:
    return [sys.executable, "-m", "trainer.evaluation", "--model", hf, "--input_dir", hdf5, "--device", device]
