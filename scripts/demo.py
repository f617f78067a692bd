"""`make demo`: the shipped Hungarian sample dump -> corpus -> vocab -> HDF5 -> tiny BERT -> HF model.

Usage:
    python scripts/demo.py                          # what `make demo` runs (data in data/demo/)
    python scripts/demo.py --data-dir /tmp/demo --phase1-steps 100 --phase2-steps 20
    python scripts/demo.py --only pipeline          # the data part only (tests/scripts/test_demo.py)

Five steps, all offline, each printing the command it runs, its progress and a one-line summary:
  1. `pipeline run` on data/sample/huwiki-sample.xml.bz2: extract, format, split, filter, a small
     vocab (sentencepiece BPE -> WordPiece), shards, HDF5 at seq 128/20 and seq 512/80;
  2. phase 1: a tiny BERT (2 layers, hidden 128) on 2 CPU ranks, `torchrun --nproc_per_node=2`
     (gloo), on the seq 128 shards;
  3. phase 2: from phase 1's checkpoint (`--phase2 --init_checkpoint`), on the seq 512 shards;
  4. export to a Hugging Face folder (`python -m trainer.export`);
  5. fill-mask on Hungarian sentences with transformers, from the exported folder
     (scripts/fill_mask.py);
  6. the probe: the model fine-tuned on the tagging task `pipeline probe` built from the
     sample's own links, against the same model from random weights, 3 seeds
     (`python -m trainer.finetune`, scripts/demo_probe.py).
A rerun skips what is finished: the pipeline stages say "already done", a training run whose
newest checkpoint reached its max_steps is not started again (an interrupted one resumes from
its last checkpoint), and an export newer than its checkpoint is kept.
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repo root (this file is scripts/demo.py)
if __package__ in (None, "") and str(ROOT) not in sys.path:  # run by path: import the product
    sys.path.insert(0, str(ROOT))

from pipeline.encoding.hdf5_format import output_folder_name  # noqa: E402
from scripts.demo_probe import probe_command, probe_summary  # noqa: E402
from trainer.checkpoint import checkpoint_step, list_checkpoints  # noqa: E402  (no torch)

SAMPLE_DUMP = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
CONFIGS = ROOT / "trainer" / "configs"
LANG = "hu"  # the shipped sample is Hungarian

# Hungarian sentences and the word the sample's articles teach for the [MASK] (a tiny model on a
# tiny corpus learns the sample's phrasing, not Hungarian; the rank shows how far it got).
FILL_MASK_EXAMPLES = (
    ("Debrecen Magyarország második legnépesebb városa, Hajdú-Bihar vármegye [MASK].", "székhelye"),
    ("A legutóbbi népszámlálás szerint Szeged [MASK] 160 766 fő.", "lakossága"),
    ("Bartók Béla magyar [MASK], zongoraművész és népzenekutató.", "zeneszerző"),
)


class DemoError(RuntimeError):
    """A step failed; the message names the step and what to look at."""


@dataclass
class Settings:
    data_dir: Path
    vocab_size: int = 3000
    dupe_factor: int = 20
    encode: tuple = ((128, 20), (512, 80))
    phase1_config: Path = CONFIGS / "demo_phase1.json"
    phase2_config: Path = CONFIGS / "demo_phase2.json"
    phase1_steps: int | None = None  # None: the config's max_steps
    phase2_steps: int | None = None
    nproc: int = 2
    workers: int | None = None

    @property
    def lang_dir(self) -> Path:
        return self.data_dir / LANG

    @property
    def vocab_dir(self) -> Path:
        return self.lang_dir / "vocab"

    def hdf5_dir(self, seq: int, pred: int) -> Path:
        """The encode stage's output folder for SEQ/PRED (cased vocab, encode's default masking
        probability and seed, the demo's dupe factor)."""
        return self.lang_dir / output_folder_name(False, seq, pred, dupe_factor=self.dupe_factor)

    @property
    def runs(self) -> Path:
        return self.data_dir / "runs"

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


def say(msg: str = "") -> None:
    print(msg, flush=True)


def header(n: int, total: int, title: str) -> None:
    say()
    say(f"== [{n}/{total}] {title}")


def run_command(cmd: list, step: str, env: dict | None = None) -> None:
    """Run a command in the repo root, its output streaming to ours; a failure names the step."""
    shown = " ".join(shlex.quote(str(c)) for c in cmd)
    shown = shown.replace(f"{sys.executable} -m torch.distributed.run", "torchrun")
    say(f"$ {shown.replace(sys.executable, 'python')}")
    full_env = {**os.environ, "PYTHONUTF8": "1", **(env or {})}
    proc = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=full_env)
    if proc.returncode != 0:
        raise DemoError(f"{step} stopped (exit status {proc.returncode}): see the messages above; "
                        "rerun `make demo` to continue (finished stages and checkpoints are kept)")


# ---------------------------------------------------------------------------------------------
# 1. the data pipeline


def pipeline_command(s: Settings) -> list:
    cmd = [sys.executable, "-m", "pipeline", "--data-dir", s.data_dir, "--lang", LANG]
    if s.workers:
        cmd += ["--workers", s.workers]
    cmd += ["run", "--dump", SAMPLE_DUMP.relative_to(ROOT), "--vocab-size", s.vocab_size,
            "--dupe-factor", s.dupe_factor]
    for seq, pred in s.encode:
        cmd += ["--encode", f"{seq}/{pred}"]
    return cmd


def run_pipeline(s: Settings) -> str:
    """Every stage on the sample dump; finished stages are skipped by the pipeline itself."""
    run_command(pipeline_command(s), "pipeline run")
    parts = []
    for seq, pred in s.encode:
        manifest = read_json(s.hdf5_dir(seq, pred) / "manifest.json")
        if manifest is None:
            raise DemoError(f"pipeline run ended without {s.hdf5_dir(seq, pred)}/manifest.json")
        parts.append(f"{manifest['summary']['training_instances']:,} training instances "
                     f"at {seq}/{pred}")
    vocab_lines = sum(1 for _ in open(s.vocab_dir / "vocab.txt", encoding="utf-8"))
    return f"vocab {vocab_lines:,} tokens; " + "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# 2-3. training under torchrun


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def planned_steps(config: Path, override: int | None) -> int:
    if override is not None:
        return override
    cfg = read_json(config)
    if cfg is None or "max_steps" not in cfg:
        raise DemoError(f"{config} is missing or has no max_steps")
    return int(cfg["max_steps"])


def trained_step(output_dir: Path) -> int:
    """The step of the newest complete checkpoint (trainer/checkpoint/layout.py's rule), 0 if none.

    The checkpoint module's layout functions do not start torch: a finished run is recognised
    at once."""
    found = list_checkpoints(output_dir)
    return checkpoint_step(found[-1]) if found else 0


def is_older_than_phase1(s: Settings) -> bool:
    """Phase 2 started before phase 1's newest checkpoint was written (phase 1 was extended)."""
    p1, p2 = newest_model_file(s.runs / "phase1"), oldest_model_file(s.runs / "phase2")
    return p1 is not None and p2 is not None and p1.stat().st_mtime > p2.stat().st_mtime


def torchrun_prefix(nproc: int) -> list:
    # --standalone: a private rendezvous on a free port (nothing else on the machine can clash)
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]


def last_train_record(output_dir: Path) -> dict:
    path = output_dir / "train_log.jsonl"
    if not path.is_file():
        return {}
    last = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else {}
        if "loss" in rec:
            last = rec
    return last


def train(s: Settings, phase: int) -> str:
    """Phase 1 or 2 under torchrun; skipped when its checkpoints already reach max_steps."""
    config = s.phase1_config if phase == 1 else s.phase2_config
    steps = planned_steps(config, s.phase1_steps if phase == 1 else s.phase2_steps)
    out = s.runs / f"phase{phase}"
    done = trained_step(out)
    if done >= steps:
        stale = phase == 2 and is_older_than_phase1(s)
        return (f"already trained to step {done} in {out}, not rerun"
                + (f"; WARNING: phase 1 has trained further since: delete {out} to redo phase 2"
                   if stale else ""))
    seq, pred = s.encode[0] if phase == 1 else s.encode[-1]
    cmd = torchrun_prefix(s.nproc) + [
        "trainer/run_pretraining.py", "--config_file", config.relative_to(ROOT),
        "--input_dir", s.hdf5_dir(seq, pred), "--vocab_file", s.vocab_dir,
        "--output_dir", out, "--max_steps", steps,
        "--resume_from_checkpoint",  # continues an interrupted run, starts afresh otherwise
    ]
    if phase == 2:
        cmd += ["--phase2", "--init_checkpoint", s.runs / "phase1"]
    if done:
        say(f"resuming from step {done} of {steps}")
    # one intra-op thread per rank: the ranks share the cores, more threads only spin
    run_command(cmd, f"phase {phase} training", env={"OMP_NUM_THREADS": "1"})
    rec = last_train_record(out)
    return (f"step {trained_step(out)}, loss {rec.get('loss', float('nan')):.3f} "
            f"(mlm {rec.get('mlm_loss', float('nan')):.3f}), checkpoints in {out / 'checkpoints'}")


# ---------------------------------------------------------------------------------------------
# 4-5. export and fill-mask


def newest_model_file(output_dir: Path) -> Path | None:
    found = list_checkpoints(output_dir)
    return found[-1] / "model.pt" if found else None


def oldest_model_file(output_dir: Path) -> Path | None:
    found = list_checkpoints(output_dir)
    return found[0] / "model.pt" if found else None


def export(s: Settings) -> str:
    """The newest phase-2 checkpoint as a Hugging Face folder, unless that export exists."""
    src = newest_model_file(s.runs / "phase2")
    if src is None:
        raise DemoError(f"no checkpoint under {s.runs / 'phase2'} to export")
    target = s.hf_dir / "model.safetensors"
    if target.is_file() and target.stat().st_mtime >= src.stat().st_mtime:
        return f"{s.hf_dir} is newer than {src.parent.name}, kept"
    run_command([sys.executable, "-m", "trainer.export", "--checkpoint_dir", s.runs / "phase2",
                 "--output", s.hf_dir], "export")
    return f"{src.parent.name} -> {s.hf_dir}"


def fill_mask_examples(s: Settings) -> str:
    """Top-5 guesses for each example, and the rank of the expected word, through transformers."""
    say(f"$ python scripts/fill_mask.py {s.hf_dir} \"{FILL_MASK_EXAMPLES[0][0]}\"   (and "
        f"{len(FILL_MASK_EXAMPLES) - 1} more, in one process)")
    # fill_mask() keeps transformers quiet (no load report, no bars): the demo shows results
    fill_mask = runpy.run_path(str(ROOT / "scripts" / "fill_mask.py"))["fill_mask"]

    vocab_size = int(read_json(s.hf_dir / "config.json")["vocab_size"])
    ranks = []
    for text, expected in FILL_MASK_EXAMPLES:
        (ranking,) = fill_mask(s.hf_dir, text, top_k=vocab_size)  # every token, best first
        tokens = [tok for tok, _ in ranking]
        rank = tokens.index(expected) + 1 if expected in tokens else None
        ranks.append(rank)
        say(text)
        say("    [MASK] = " + ", ".join(f"{tok} ({p:.2f})" for tok, p in ranking[:5])
            + (f"   | '{expected}' ranks {rank} of {vocab_size}" if rank else ""))
    found = [r for r in ranks if r]
    return (f"{len(FILL_MASK_EXAMPLES)} sentences; expected word ranks "
            + ", ".join(str(r) if r else "-" for r in ranks)
            + (f" (median {sorted(found)[len(found) // 2]})" if found else ""))


def probe(s: Settings) -> str:
    """Pretrained against random init on the probe (finished seeds are kept by finetune)."""
    out = s.data_dir / "probe"
    run_command(probe_command(s.hf_dir, s.lang_dir, out), "probe fine-tuning")
    return probe_summary(out / "results.json")


# ---------------------------------------------------------------------------------------------


def artefacts(s: Settings) -> list[tuple[str, Path]]:
    rows = [
        ("corpus (one sentence per line)", s.lang_dir / "filtered"),
        ("train/test text shards", s.lang_dir / "sharded"),
        ("vocab.txt + quality report", s.vocab_dir),
        ("report.html (open it in a browser)", s.lang_dir / "report.html"),
    ]
    rows += [(f"HDF5 seq {seq}/{pred}", s.hdf5_dir(seq, pred) / f"{LANG}wiki") for seq, pred in s.encode]
    rows += [
        ("phase 1 run (log, TensorBoard, ckpts)", s.runs / "phase1"),
        ("phase 2 run", s.runs / "phase2"),
        ("Hugging Face model", s.hf_dir),
        ("probe results (results.json)", s.data_dir / "probe"),
    ]
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python scripts/demo.py",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data-dir", type=Path, default=ROOT / "data" / "demo",
                   help="everything the demo writes goes here")
    p.add_argument("--vocab-size", type=int, default=3000,
                   help="vocab.txt lines; at most the vocab_size of trainer/configs/demo_bert_tiny.json")
    p.add_argument("--dupe-factor", type=int, default=20,
                   help="encode passes over the sample: more mask variety for the tiny model")
    p.add_argument("--phase1-steps", type=int, default=None,
                   help="default: max_steps of trainer/configs/demo_phase1.json")
    p.add_argument("--phase2-steps", type=int, default=None,
                   help="default: max_steps of trainer/configs/demo_phase2.json")
    p.add_argument("--nproc", type=int, default=2, help="torchrun ranks (CPU processes)")
    p.add_argument("--workers", type=int, default=None, help="pipeline worker processes")
    p.add_argument("--only", choices=("pipeline",), default=None,
                   help="stop after the data pipeline")
    a = p.parse_args(argv)
    s = Settings(data_dir=a.data_dir.resolve(), vocab_size=a.vocab_size, dupe_factor=a.dupe_factor,
                 phase1_steps=a.phase1_steps, phase2_steps=a.phase2_steps, nproc=a.nproc,
                 workers=a.workers)
    if not SAMPLE_DUMP.is_file():
        print(f"Error: {SAMPLE_DUMP} is missing: the demo runs on the sample the project ships",
              file=sys.stderr)
        return 1
    model_vocab = (read_json(CONFIGS / "demo_bert_tiny.json") or {}).get("vocab_size", 0)
    if a.only is None and a.vocab_size > model_vocab:
        print(f"Error: --vocab-size {a.vocab_size} is larger than the demo model's vocab_size "
              f"{model_vocab} ({CONFIGS / 'demo_bert_tiny.json'}): use at most {model_vocab}",
              file=sys.stderr)
        return 2
    steps = [("pipeline: sample dump -> sentences -> vocab -> HDF5", run_pipeline)]
    if a.only is None:
        steps += [
            (f"phase 1: tiny BERT, seq 128, {s.nproc} CPU ranks (torchrun, gloo)", lambda s: train(s, 1)),
            (f"phase 2: from phase 1, seq 512, {s.nproc} CPU ranks", lambda s: train(s, 2)),
            ("export to Hugging Face", export),
            ("fill-mask in Hungarian with transformers", fill_mask_examples),
            ("probe: pretrained vs random init, 3 seeds", probe),
        ]
    log = StepLog()
    started = time.time()
    try:
        for n, (title, fn) in enumerate(steps, 1):
            header(n, len(steps), title)
            t0 = time.time()
            result = fn(s)
            log.add(title.split(":")[0], time.time() - t0, result)
    except DemoError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Error: interrupted; rerun `make demo` to continue where it stopped", file=sys.stderr)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
