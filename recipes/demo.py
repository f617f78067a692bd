"""`make demo`: the shipped Hungarian sample dump -> corpus -> vocab -> packed HDF5 -> a small
ModernBERT (the modern recipe) -> Hugging Face model -> a number that says whether it learned.

Usage:
    python -m recipes.demo --data-dir data/demo     # what `make demo` runs
    python -m recipes.demo --data-dir /tmp/demo --steps 100
    python -m recipes.demo --only pipeline          # the data part only (tests/recipes/test_demo.py)
    python -m recipes.demo --probe on               # also the probe, even on the sample's 15 sentences
    python scripts/demo.py ...                      # the same (installed: wiki2bert-demo)

Six steps, all offline, each printing the command it runs, its progress and a one-line summary:
  1. `pipeline run` on data/sample/huwiki-sample.xml.bz2 (extract, format, split, filter, a small
     vocab, shards, the probe, report.html), then `pipeline encode --pack`: packed rows of 128
     tokens, no sentence pairs;
  2. training: the modern recipe (trainer/configs/demo_modern.json: ModernBERT 4 x 128, MLM only,
     dynamic 30% masking (80/10/10), AdamW, warmup-stable-decay) on 2 CPU ranks, `torchrun
     --nproc_per_node=2` (gloo);
  3. export to a Hugging Face folder (`python -m trainer.export`: ModernBertForMaskedLM);
  4. fill-mask on Hungarian sentences with transformers (recipes/fill_mask.py);
  5. did it learn: masked-LM accuracy on the held-out articles' rows against the unigram
     baseline, always guessing the training text's most frequent token (recipes/heldout_mlm.py);
  6. the probe (pretrained against random init, recipes/demo_probe.py) only where its test split
     can separate the two (recipes/demo_probe.py's MIN_TEST_SENTENCES); the sample's cannot, and
     the demo says so.
A rerun skips what is finished: the pipeline stages say "already done", a training run whose
newest checkpoint reached its max_steps is not started again (an interrupted one resumes from
its last checkpoint), and an export newer than its checkpoint is kept.
"""
from __future__ import annotations

import json
import sys
import time
from argparse import ArgumentDefaultsHelpFormatter
from dataclasses import dataclass, field
from pathlib import Path

from common.flags import HintingParser, started_as
from pipeline.encoding.hdf5_format import output_folder_name
from recipes.commands import (
    DemoError,
    StepFailed,
    read_json,
    run_command,
    say,
    torchrun_prefix,
)
from recipes.demo_probe import MIN_TEST_SENTENCES, probe_command, probe_summary
from recipes.heldout_mlm import heldout_accuracy, summary_line, verdict_lines  # torch when called
from trainer.checkpoint import checkpoint_step, list_checkpoints  # no torch

ROOT = Path(__file__).resolve().parents[1]  # the repo root: the sample, the configs, where commands run
SAMPLE_DUMP = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
CONFIGS = ROOT / "trainer" / "configs"
TRAIN_CONFIG = CONFIGS / "demo_modern.json"
MODEL_CONFIG = CONFIGS / "demo_modernbert.json"
LANG = "hu"  # the shipped sample is Hungarian
PACKED = {"max_seq": 128, "max_pred": 40, "masked_lm_prob": 0.3, "dupe_factor": 1}

# Hungarian sentences and the word the sample's articles teach for the [MASK] (a small model on a
# tiny corpus learns the sample's phrasing, not Hungarian; the rank shows how far it got).
FILL_MASK_EXAMPLES = (
    ("Debrecen Magyarország második legnépesebb városa, Hajdú-Bihar vármegye [MASK].", "székhelye"),
    ("A legutóbbi népszámlálás szerint Szeged [MASK] 160 766 fő.", "lakossága"),
    ("Bartók Béla magyar [MASK], zongoraművész és népzenekutató.", "zeneszerző"),
)


@dataclass
class Settings:
    data_dir: Path
    vocab_size: int = 3000
    steps: int | None = None  # None: the config's max_steps
    nproc: int = 2
    workers: int | None = None
    probe: str = "auto"       # auto: only where the probe's test split can separate the models
    result: dict | None = None   # the held-out measure, for the closing lines

    @property
    def lang_dir(self) -> Path:
        return self.data_dir / LANG

    @property
    def vocab_dir(self) -> Path:
        return self.lang_dir / "vocab"

    @property
    def hdf5_dir(self) -> Path:
        """The packed encode output (cased vocab, encode's seed)."""
        p = PACKED
        return self.lang_dir / output_folder_name(False, p["max_seq"], p["max_pred"], p["masked_lm_prob"],
                                                  dupe_factor=p["dupe_factor"], packed=True)

    @property
    def run_dir(self) -> Path:
        return self.data_dir / "runs" / "modern"

    @property
    def hf_dir(self) -> Path:
        return self.data_dir / "hf_model"


@dataclass
class StepLog:
    """Seconds per step and the one-line results, for the table at the end."""

    rows: list = field(default_factory=list)

    def add(self, name: str, seconds: float, result: str) -> None:
        self.rows.append((name, seconds, result))
        say(f"-> {name}: {result} ({seconds:.1f} s)")


def header(n: int, total: int, title: str) -> None:
    say()
    say(f"== [{n}/{total}] {title}")


# ---------------------------------------------------------------------------------------------
# 1. the data pipeline


def pipeline_commands(s: Settings) -> list[list]:
    base = [sys.executable, "-m", "pipeline", "--data-dir", s.data_dir, "--lang", LANG]
    if s.workers:
        base += ["--workers", s.workers]
    run = base + ["run", "--dump", SAMPLE_DUMP.relative_to(ROOT), "--vocab-size", s.vocab_size,
                  "--no-encode"]
    encode = base + ["encode", "--pack", "--max-seq", PACKED["max_seq"], "--max-pred",
                     PACKED["max_pred"], "--masked-lm-prob", PACKED["masked_lm_prob"],
                     "--dupe-factor", PACKED["dupe_factor"]]
    return [run, encode]


def run_pipeline(s: Settings) -> str:
    """Every stage on the sample dump, then the packed encode; finished stages are skipped."""
    for cmd in pipeline_commands(s):
        run_command(cmd, "pipeline")
    manifest = read_json(s.hdf5_dir / "manifest.json")
    if manifest is None:
        raise DemoError(f"pipeline encode ended without {s.hdf5_dir}/manifest.json")
    summary = manifest["summary"]
    vocab_lines = sum(1 for _ in open(s.vocab_dir / "vocab.txt", encoding="utf-8"))
    return (f"vocab {vocab_lines:,} tokens; {summary['training_instances']:,} training and "
            f"{summary['instances'] - summary['training_instances']:,} held-out packed rows of "
            f"{PACKED['max_seq']} tokens")


# ---------------------------------------------------------------------------------------------
# 2. training under torchrun


def planned_steps(s: Settings) -> int:
    if s.steps is not None:
        return s.steps
    cfg = read_json(TRAIN_CONFIG)
    if cfg is None or "max_steps" not in cfg:
        raise DemoError(f"{TRAIN_CONFIG} is missing or has no max_steps")
    return int(cfg["max_steps"])


def trained_step(output_dir: Path) -> int:
    """The step of the newest complete checkpoint (trainer/checkpoint/layout.py's rule), 0 if none.
    The checkpoint module's layout functions do not start torch: a finished run is recognised
    at once."""
    found = list_checkpoints(output_dir)
    return checkpoint_step(found[-1]) if found else 0


def last_records(output_dir: Path) -> tuple[dict, dict]:
    """The last training and the last eval record of train_log.jsonl."""
    path = output_dir / "train_log.jsonl"
    train, ev = {}, {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line) if line.strip() else {}
            if "loss" in rec:
                train = rec
            if "eval_mlm_loss" in rec:
                ev = rec
    return train, ev


def train_command(s: Settings, steps: int) -> list:
    # --no_nsp is in the config: explicit, so the demo does not rely on modernbert implying it
    return torchrun_prefix(s.nproc) + [
        "trainer/run_pretraining.py", "--config_file", TRAIN_CONFIG.relative_to(ROOT),
        "--input_dir", s.hdf5_dir, "--vocab_file", s.vocab_dir, "--output_dir", s.run_dir,
        "--max_steps", steps,
        "--resume_from_checkpoint",  # continues an interrupted run, starts afresh otherwise
    ]


def train(s: Settings) -> str:
    """The modern recipe under torchrun; skipped when its checkpoints already reach max_steps."""
    steps = planned_steps(s)
    out = s.run_dir
    done = trained_step(out)
    if done >= steps:
        return f"already trained to step {done} in {out}, not rerun"
    if done:
        say(f"resuming from step {done} of {steps}")
    # one intra-op thread per rank: the ranks share the cores, more threads only spin
    run_command(train_command(s, steps), "training", env={"OMP_NUM_THREADS": "1"})
    rec, ev = last_records(out)
    return (f"step {trained_step(out)}, training MLM loss {rec.get('mlm_loss', float('nan')):.3f} "
            f"at 30% masked, checkpoints in {out / 'checkpoints'}")


# ---------------------------------------------------------------------------------------------
# 3-6. export, fill-mask, held-out accuracy, probe


def newest_model_file(output_dir: Path) -> Path | None:
    found = list_checkpoints(output_dir)
    return found[-1] / "model.pt" if found else None


def export(s: Settings) -> str:
    """The newest checkpoint as a Hugging Face folder, unless that export exists."""
    src = newest_model_file(s.run_dir)
    if src is None:
        raise DemoError(f"no checkpoint under {s.run_dir} to export")
    target = s.hf_dir / "model.safetensors"
    if target.is_file() and target.stat().st_mtime >= src.stat().st_mtime:
        return f"{s.hf_dir} is newer than {src.parent.name}, kept"
    run_command([sys.executable, "-m", "trainer.export", "--checkpoint_dir", s.run_dir,
                 "--output", s.hf_dir], "export")
    return f"{src.parent.name} -> {s.hf_dir}"


def fill_mask_examples(s: Settings) -> str:
    """Top-5 guesses for each example, and the rank of the expected word, through transformers
    (the word hidden whole: recipes/fill_mask.py's [[word]])."""
    from recipes.fill_mask import (
        fill_masks,  # quiet transformers: the demo shows results
    )

    texts = [text.replace("[MASK]", f"[[{expected}]]") for text, expected in FILL_MASK_EXAMPLES]
    say(f"$ python scripts/fill_mask.py {s.hf_dir} " + " ".join(f'"{t}"' for t in texts))
    filled = fill_masks(s.hf_dir, texts)
    for f in filled:
        say("\n".join(f.lines()))
    return (f"{len(FILL_MASK_EXAMPLES)} sentences; expected word ranks "
            + ", ".join(f.ranks for f in filled))


def heldout(s: Settings) -> str:
    """Masked-LM accuracy on the held-out rows against the unigram baseline."""
    say(f"$ python scripts/heldout_mlm.py {s.hf_dir} {s.hdf5_dir}")
    s.result = heldout_accuracy(s.hf_dir, s.hdf5_dir)
    return summary_line(s.result)


def probe(s: Settings) -> str:
    """Pretrained against random init on the probe, where its test split can tell them apart."""
    data = read_json(s.lang_dir / "probe" / "manifest.json") or {}
    test = (data.get("summary") or {}).get("test_sentences", 0)
    if s.probe == "auto" and test < MIN_TEST_SENTENCES:
        return (f"not run: the sample's probe has {test} held-out sentences, under "
                f"{MIN_TEST_SENTENCES}: too few to tell a pretrained model from a random one "
                "(--probe on runs it anyway; a real dump has thousands)")
    out = s.data_dir / "probe"
    run_command(probe_command(s.hf_dir, s.lang_dir, out), "probe fine-tuning")
    return probe_summary(out / "results.json")


# ---------------------------------------------------------------------------------------------


def artefacts(s: Settings) -> list[tuple[str, Path]]:
    return [
        ("corpus (one sentence per line)", s.lang_dir / "filtered"),
        ("train/test text shards", s.lang_dir / "sharded"),
        ("vocab.txt + quality report", s.vocab_dir),
        ("report.html (open it in a browser)", s.lang_dir / "report.html"),
        ("HDF5, packed rows", s.hdf5_dir / f"{LANG}wiki"),
        ("training run (log, TensorBoard, ckpts)", s.run_dir),
        ("Hugging Face model", s.hf_dir),
        ("probe results (results.json)", s.data_dir / "probe"),
    ]


def main(argv=None) -> int:
    p = HintingParser(prog=started_as("recipes.demo", "wiki2bert-demo"),
                                description=__doc__.split("\n\n")[0],
                                formatter_class=ArgumentDefaultsHelpFormatter)
    p.add_argument("--data-dir", type=Path, default=ROOT / "data" / "demo",
                   help="everything the demo writes goes here")
    p.add_argument("--vocab-size", type=int, default=3000,
                   help=f"vocab.txt lines; at most the vocab_size of {MODEL_CONFIG.relative_to(ROOT)}")
    p.add_argument("--steps", type=int, default=None,
                   help=f"training steps (default: max_steps of {TRAIN_CONFIG.relative_to(ROOT)})")
    p.add_argument("--nproc", type=int, default=2, help="torchrun ranks (CPU processes)")
    p.add_argument("--workers", type=int, default=None, help="pipeline worker processes")
    p.add_argument("--probe", choices=("auto", "on", "off"), default="auto",
                   help="the probe: auto runs it only where its test split can separate a "
                        f"pretrained model from a random one (at least {MIN_TEST_SENTENCES} sentences)")
    p.add_argument("--only", choices=("pipeline",), default=None,
                   help="stop after the data pipeline")
    a = p.parse_args(argv)
    s = Settings(data_dir=a.data_dir.resolve(), vocab_size=a.vocab_size, steps=a.steps,
                 nproc=a.nproc, workers=a.workers, probe=a.probe)
    if not SAMPLE_DUMP.is_file():
        print(f"Error: {SAMPLE_DUMP} is missing: the demo runs on the sample the project ships",
              file=sys.stderr)
        return 1
    model_vocab = (read_json(MODEL_CONFIG) or {}).get("vocab_size", 0)
    if a.only is None and a.vocab_size > model_vocab:
        print(f"Error: --vocab-size {a.vocab_size} is larger than the demo model's vocab_size "
              f"{model_vocab} ({MODEL_CONFIG}): use at most {model_vocab}", file=sys.stderr)
        return 2
    steps = [("pipeline: sample dump -> sentences -> vocab -> packed HDF5", run_pipeline)]
    if a.only is None:
        steps += [
            (f"training: the modern recipe, ModernBERT 4 x 128, {s.nproc} CPU ranks (torchrun, gloo)",
             train),
            ("export to Hugging Face", export),
            ("fill-mask in Hungarian with transformers", fill_mask_examples),
            ("held-out: masked-LM accuracy against the unigram baseline", heldout),
        ]
        if a.probe != "off":
            steps.append(("probe: pretrained vs random init, where the data can tell", probe))
    log = StepLog()
    started = time.time()
    try:
        for n, (title, fn) in enumerate(steps, 1):
            header(n, len(steps), title)
            t0 = time.time()
            result = fn(s)
            log.add(title.split(":")[0], time.time() - t0, result)
    except DemoError as exc:
        more = ("; rerun `make demo` to continue (finished stages and checkpoints are kept)"
                if isinstance(exc, StepFailed) else "")
        print(f"Error: {exc}{more}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Interrupted: rerun `make demo` to continue where it stopped", file=sys.stderr)
        return 130
    total = time.time() - started
    say()
    say(f"== demo finished in {total:.0f} s:")
    for name, seconds, _ in log.rows:
        say(f"  {name:<40} {seconds:7.1f} s")
    say("== artefacts:")
    for what, path in artefacts(s):
        if path.exists():
            say(f"  {what:<40} {path}")
    if a.only is None:
        say(f"  try: python scripts/fill_mask.py {s.hf_dir} \"Szeged Magyarország harmadik "
            "legnépesebb [MASK].\"")
    if s.result:
        shard = read_json(s.lang_dir / "sharded" / "manifest.json") or {}
        say()
        for line in verdict_lines(s.result, (shard.get("summary") or {}).get("test_documents")):
            say(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
