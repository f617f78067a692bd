"""The trainer on thousands of small HDF5 shards (issue 62): its start, first steps and resume on
one folder of --shards shards and on the language mixture of --languages such folders; prints a
table: shards, start-up seconds, peak RSS, the most HDF5 files open at once, HDF5 files opened
(strace), first-step seconds, and the same for the resume.

Usage:
    .venv/bin/python bench/bench_many_shards.py [--shards 5000] [--languages 2] [--runs 3]
        [--base 88ff2f6] [--work /tmp/w2b_bench_many_shards]

Input: made here once (kept in WORK/data): --shards text shards of two short synthetic
documents each (tests/helpers/encode_testdata.py's multi-script sentences) through `pipeline
encode` (rows of 64 tokens, --dupe-factor 1, two workers): a folder of small shards with
encode's manifest beside them, a few rows a file; a copy of it without the manifest (as
hand-made files come); the mixture's other languages likewise (their own text, the first
language's vocab). Each run is a fresh trainer process (a 2-layer BERT of width 32 on the CPU,
16 rows a step): 2 steps (of 4 planned) with a checkpoint, then a resume for the other 2.
Measured from outside the process: start-up = from the process's start until its first step
began (the first step's record appears, less the step's own time from its samples/s); peak RSS
(VmHWM) and the HDF5 files it held open at once, sampled from /proc every 20 ms; "opened":
openat calls on *.hdf5 over the whole run, counted by strace in one more run (only the count is
taken from it, not its times). With --runs N the times are medians of N runs, the memory and
open files the largest. `--base REV` runs git revision REV (`git archive`) on the same folders.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # run by path: the tests' generator of encode folders

from bench_long_rows import base_code  # noqa: E402  beside this script: git archive of a revision, once
from process_tree import peak_rss_mb  # noqa: E402

from tests.helpers.many_shards import encoded_folder, hdf5_fds, without_manifest  # noqa: E402

LANGS = ("xx", "yy", "zz", "ww")
MODEL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
         "max_position_embeddings": 64, "type_vocab_size": 2}


def folders(data: Path, shards: int, languages: int) -> list[Path]:
    """The encode folders of the languages (made once; the first language's vocab for all)."""
    out = []
    for i, lang in enumerate(LANGS[:languages]):
        found = sorted((data / lang).glob("hdf5_*"))
        if not (found and (found[0] / "manifest.json").is_file()):
            shutil.rmtree(data / lang, ignore_errors=True)
            t0 = time.perf_counter()
            encoded_folder(data, lang, shards, seed=i, vocab=data / LANGS[0] / "vocab" if i else None, workers=2)
            print(f"  encoded {shards:,} shards of {lang} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            found = sorted((data / lang).glob("hdf5_*"))
        out.append(found[0])
    return out


def trainer_argv(code: Path, inputs: list[Path], vocab: Path, model: Path, out: Path, resume: bool) -> list[str]:
    data = ["--input_dir", str(inputs[0])] if len(inputs) == 1 else \
        [a for lang, d in zip(LANGS, inputs) for a in ("--input_dir", f"{lang}={d}")]
    return [sys.executable, str(code / "trainer" / "run_pretraining.py"), "--bert_config", str(model), *data,
            "--vocab_file", str(vocab), "--output_dir", str(out), "--train_batch_size", "16", "--max_steps", "4",
            "--log_every", "1", "--checkpoint_every", "2", "--eval_every", "1000", "--device", "cpu",
            "--no-tensorboard", *(["--resume_from_checkpoint"] if resume else ["--steps_this_run", "2"])]


def run_once(argv: list[str], code: Path, out: Path) -> dict:
    """One trainer process watched from outside: start-up and first-step seconds, peak RSS MB,
    the most HDF5 files open at once."""
    log = out / "train_log.jsonl"
    seen = len(log.read_text().splitlines()) if log.is_file() else 0
    env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=code, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first_at, most_open, rss = None, 0, 0.0
    while proc.poll() is None:
        most_open = max(most_open, hdf5_fds(proc.pid))
        with contextlib.suppress(OSError, StopIteration):   # it ended in between
            rss = max(rss, peak_rss_mb(proc.pid))
        if first_at is None and log.is_file() and len(log.read_text().splitlines()) > seen:
            first_at = time.perf_counter() - t0
        time.sleep(0.02)
    err = proc.stderr.read()
    if proc.returncode:
        raise SystemExit(f"the trainer failed ({code}):\n{err[-3000:]}")
    first = json.loads(log.read_text().splitlines()[seen])
    step_s = 16 / first["samples_per_sec"]
    first_at = first_at if first_at is not None else time.perf_counter() - t0
    return {"startup": first_at - step_s, "first_step": step_s, "rss_mb": rss, "most_open": most_open}


def opened(argv: list[str], code: Path) -> int:
    """openat calls on *.hdf5 files over one run, counted by strace (0 without strace)."""
    if shutil.which("strace") is None:
        return 0
    with tempfile.NamedTemporaryFile(suffix=".strace") as trace:
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
        subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", trace.name, *argv], cwd=code, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return sum(".hdf5" in line for line in Path(trace.name).read_text().splitlines())


def measure(code: Path, inputs: list[Path], vocab: Path, model: Path, work: Path, runs: int) -> dict:
    """Start + 2 steps, then the resume, `runs` times (fresh output folders); the opens of one
    more start and resume under strace."""
    starts, resumes = [], []
    for _ in range(runs):
        out = Path(tempfile.mkdtemp(dir=work, prefix="run-"))
        starts.append(run_once(trainer_argv(code, inputs, vocab, model, out, False), code, out))
        resumes.append(run_once(trainer_argv(code, inputs, vocab, model, out, True), code, out))
        shutil.rmtree(out)
    out = Path(tempfile.mkdtemp(dir=work, prefix="strace-"))
    opens = [opened(trainer_argv(code, inputs, vocab, model, out, resume), code) for resume in (False, True)]
    shutil.rmtree(out)

    def med(ms, key):
        return statistics.median(m[key] for m in ms)

    return {"startup": med(starts, "startup"), "first_step": med(starts, "first_step"),
            "rss_mb": max(m["rss_mb"] for m in starts + resumes),
            "most_open": max(m["most_open"] for m in starts + resumes), "opened": opens[0],
            "resume": med(resumes, "startup"), "resume_opened": opens[1]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shards", type=int, default=5000, help="training shards a folder")
    p.add_argument("--languages", type=int, default=2, choices=range(2, len(LANGS) + 1),
                   help="folders of the mixture")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--base", default=None, help="git revision to compare with (e.g. 88ff2f6, before issue 62)")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "w2b_bench_many_shards")
    a = p.parse_args(argv)
    data = a.work / "data" / str(a.shards)
    data.mkdir(parents=True, exist_ok=True)
    found = folders(data, a.shards, a.languages)
    vocab = data / LANGS[0] / "vocab"
    model = a.work / "bert.json"
    model.write_text(json.dumps({**MODEL, "vocab_size": len((vocab / "vocab.txt").read_text().splitlines())}))
    codes = [("this checkout", ROOT)] + ([(f"base {a.base}", base_code(a.base, a.work))] if a.base else [])
    hand_made = a.work / "data" / f"{a.shards}-no-manifest"
    if not hand_made.is_dir():
        without_manifest(found[0], hand_made)
    setups = [("one folder", found[:1]), ("no manifest", [hand_made]), (f"{a.languages} languages", found)]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for what, inputs in setups:
        for name, code in codes:
            m = measure(code, inputs, vocab, model, a.work, a.runs)
            rows.append((what, name, a.shards * len(inputs), m))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    print(f"\ntrainer on many small shards: 2-layer BERT, CPU, 16 rows a step, median of {a.runs} runs ({started})\n")
    head = (f"{'data':12} {'code':14} {'shards':>6} {'start-up s':>10} {'peak RSS MB':>11} {'most open':>9} "
            f"{'opened':>7} {'first step s':>12} {'resume s':>8} {'resume opened':>13}")
    print(head)
    print("-" * len(head))
    for what, name, shards, m in rows:
        print(f"{what:12} {name:14} {shards:6,d} {m['startup']:10.1f} {m['rss_mb']:11.0f} {m['most_open']:9d} "
              f"{m['opened']:7,d} {m['first_step']:12.2f} {m['resume']:8.1f} {m['resume_opened']:13,d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
