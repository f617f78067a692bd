"""--torch_compile on the CPU across sequence-length phases, on packed rows of a real dump (issue
60.11): a three-phase ModernBERT run (the demo's model, 128 / 512 / 2,048-token rows, --tokens_per_step
4096, attention within documents), eager and compiled; prints a table per phase: the first step
(where compilation lands), the median step after it, and Dynamo's recompile-limit warnings (each
one a kind of layer sent back to eager); then the model alone on the longest rows (forward +
backward in one process and one thread, batches of varying documents): the first step, the
median from the fifth on, and the frames Dynamo compiled.

Usage:
    .venv/bin/python bench/bench_compile_cpu.py [--data /tmp/w2b_bench_compile/data] [--lang uk]
        [--seqs 128 512 2048] [--steps 8] [--runs 3] [--variants eager compiled]
        [--base 6856f37 [--base-only]] [--parts runs alone] [--work /tmp/w2b_bench_compile]

Input: DATA/LANG/hdf5_..._seq_len_S_..._packed for each S of --seqs, encoded here when missing
(`pipeline encode --pack --max-pred S*20/128 --dupe-factor 1`, after `pipeline run --no-encode
--vocab-size 4096` on ../shared/data/LANGwiki.xml.xz when the shards are missing too). Each run is
a fresh trainer process with an empty Inductor cache, so the compiled runs pay their compilation
cold; --steps steps a phase, the step time from the log
(rows a step / samples a second, --log_every 1); "first" is the phase's first step, "median" the
median of its steps from the third on. With --runs N each figure is the median over the runs, which
take turns (one of each, then the next round), so that a change in the machine's load falls on all.
`--base REV` runs git revision REV (`git archive`) beside this checkout (`--base-only`: instead of it).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_long_rows import base_code  # beside this script: git archive of a revision, once

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
MODEL = ROOT / "trainer" / "configs" / "demo_modernbert.json"
LIMIT_WARNING = "hit config.recompile_limit"
# the model alone in one process and one thread: forward + backward on batches of rows of real
# documents (each its own number of groups), compiled or not
CHILD = r"""
import json, sys, time
import numpy as np, torch
from torch._dynamo.utils import counters
from trainer.data import find_shards, read_shard
from trainer.data.loader import to_batch
from trainer.models import get_family
torch.set_num_threads(1)
folder, model_file, rows, compiled = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
family = get_family("modernbert")
model = family.build(family.read_config(json.load(open(model_file)), "bench"), unpad=True, nsp=False)
if compiled:
    family.compile(model)
batches = []
for shard in find_shards(folder).train:
    arrays = read_shard(shard.path, optional=("doc_starts",))
    for i in range(0, min(len(arrays["input_ids"]), 4 * rows) - rows + 1, rows):   # 4 a file: more documents
        batches.append(to_batch({k: v[i:i + rows] for k, v in arrays.items()}, unpad=True, within=True))
    if len(batches) >= 16:
        break
seconds = []
for batch in batches[:16]:
    t = time.perf_counter()
    model(**batch).loss.backward()
    seconds.append(time.perf_counter() - t)
groups = sorted({len(b["unpadded"].groups) for b in batches[:16]})
print(json.dumps({"seconds": seconds, "frames": counters["frames"]["total"], "groups": groups}))
"""


def packed_folders(data: Path, lang: str, seqs: list[int]) -> dict[int, Path] | None:
    """{seq: encode's packed folder}, encoded when missing; None without shards or a dump."""
    pipeline = [sys.executable, "-m", "pipeline.cli", "--data-dir", str(data), "--lang", lang, "--workers", "2"]
    if not (data / lang / "vocab" / "manifest.json").is_file():
        dump = SHARED / f"{lang}wiki.xml.xz"
        if not dump.is_file():
            return None
        subprocess.run([*pipeline, "run", "--dump", str(dump), "--no-encode", "--vocab-size", "4096"],
                       cwd=ROOT, check=True)
    folders = {}
    for seq in seqs:
        found = sorted((data / lang).glob(f"hdf5_*_seq_len_{seq}_*_packed"))
        if not found:
            subprocess.run([*pipeline, "encode", "--pack", "--max-seq", str(seq), "--max-pred",
                            str(seq * 20 // 128), "--dupe-factor", "1"], cwd=ROOT, check=True)
            found = sorted((data / lang).glob(f"hdf5_*_seq_len_{seq}_*_packed"))
        folders[seq] = found[0]
    return folders


def run_files(work: Path, data: Path, lang: str, folders: dict[int, Path]) -> tuple[Path, Path]:
    """The model config (the demo's, its vocab_size the vocab's) and the phases file."""
    vocab = data / lang / "vocab" / "vocab.txt"
    config = {k: v for k, v in json.loads(MODEL.read_text()).items() if not k.startswith("_")}
    config["vocab_size"] = len(vocab.read_text(encoding="utf-8").splitlines())
    config["max_position_embeddings"] = max(folders)
    model, phases = work / "model.json", work / "phases.json"
    model.write_text(json.dumps(config))
    phases.write_text(json.dumps([{"input_dir": str(f), "share": 1 / len(folders)} for f in folders.values()]))
    return model, phases


def run_once(code: Path, work: Path, data: Path, lang: str, model: Path, phases: Path, steps: int,
             compiled: bool) -> dict:
    """One trainer run: {"phases": [(seq, [step seconds])], "warnings": n, "wall": s}."""
    out = Path(tempfile.mkdtemp(dir=work, prefix="run-"))
    env = {**os.environ, "PYTHONPATH": str(code), "TORCHINDUCTOR_CACHE_DIR": str(out / "inductor")}
    argv = [sys.executable, str(code / "trainer" / "run_pretraining.py"), "--model_type", "modernbert",
            "--model_config", str(model), "--phases", str(phases), "--vocab_file", str(data / lang / "vocab"),
            "--output_dir", str(out / "run"), "--tokens_per_step", "4096", "--masking", "dynamic",
            "--optimizer", "adamw", "--learning_rate", "2e-3", "--max_steps", str(steps * len(json.loads(
                phases.read_text()))), "--device", "cpu", "--log_every", "1", "--eval_every", "1000000",
            "--checkpoint_every", "1000000", "--no-tensorboard",
            "--torch_compile" if compiled else "--no-torch_compile"]
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=code, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"the trainer failed ({code}):\n{r.stderr[-3000:]}")
    records = [json.loads(line) for line in (out / "run" / "train_log.jsonl").read_text().splitlines()]
    result, rows = [], 0
    for rec in records:
        if "phase_start" in rec:
            rows = rec["train_batch_size"] * rec["gradient_accumulation_steps"]
            result.append((rec["seq_len"], []))
        elif "samples_per_sec" in rec and result:
            result[-1][1].append(rows / rec["samples_per_sec"])
    return {"phases": result, "warnings": r.stderr.count(LIMIT_WARNING), "wall": wall}


def model_alone(code: Path, work: Path, folder: Path, model: Path, rows: int, compiled: bool) -> dict:
    """CHILD in a fresh process (an empty Inductor cache): its step seconds, frames compiled."""
    out = Path(tempfile.mkdtemp(dir=work, prefix="alone-"))
    env = {**os.environ, "PYTHONPATH": str(code), "TORCHINDUCTOR_CACHE_DIR": str(out / "inductor")}
    r = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(model), str(rows), str(int(compiled))],
                       cwd=code, env=env, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"the model alone failed ({code}):\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def summarise(runs: list[dict]) -> list[tuple]:
    """Per phase: (seq, first step s, median step s, steps), medians over the runs."""
    out = []
    for i, (seq, _) in enumerate(runs[0]["phases"]):
        firsts = [r["phases"][i][1][0] for r in runs]
        medians = [statistics.median(r["phases"][i][1][2:] or r["phases"][i][1]) for r in runs]
        out.append((seq, statistics.median(firsts), statistics.median(medians), len(runs[0]["phases"][i][1])))
    return out


def header(head: str) -> None:
    print(head)
    print("-" * len(head))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "w2b_bench_compile" / "data")
    p.add_argument("--lang", default="uk")
    p.add_argument("--seqs", nargs="+", type=int, default=[128, 512, 2048])
    p.add_argument("--steps", type=int, default=8, help="steps a phase")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--variants", nargs="+", choices=("eager", "compiled"), default=["eager", "compiled"])
    p.add_argument("--base", default=None, help="git revision to compare with (e.g. 6856f37)")
    p.add_argument("--base-only", action="store_true", help="run --base alone, not this checkout")
    p.add_argument("--parts", nargs="+", choices=("runs", "alone"), default=["runs", "alone"],
                   help="the trainer's three-phase runs, the model alone on the longest rows")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "w2b_bench_compile")
    a = p.parse_args(argv)
    a.work.mkdir(parents=True, exist_ok=True)
    data = a.data.resolve()
    folders = packed_folders(data, a.lang, a.seqs)
    if folders is None:
        print(f"skipped: no {data / a.lang / 'vocab'} and no {SHARED / (a.lang + 'wiki.xml.xz')}")
        return 0
    model, phases = run_files(a.work, data, a.lang, folders)
    codes = ([] if a.base and a.base_only else [("this checkout", ROOT)]) + \
        ([(f"base {a.base}", base_code(a.base, a.work))] if a.base else [])
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs = {(name, variant): [] for name, _ in codes for variant in a.variants if "runs" in a.parts}
    for _ in range(a.runs if "runs" in a.parts else 0):   # one of each in turn: a shared machine's load changes
        for name, code in codes:
            for variant in a.variants:
                runs[name, variant].append(run_once(code, a.work, data, a.lang, model, phases, a.steps,
                                                    variant == "compiled"))
                print(f"  {name} {variant}: {runs[name, variant][-1]}", file=sys.stderr, flush=True)
    rows = []
    for (name, variant), done in runs.items():
        for seq, first, median, n in summarise(done):
            rows.append((name, variant, seq, n, first, median, max(r["warnings"] for r in done),
                         statistics.median(r["wall"] for r in done)))
    longest = max(folders)
    alone = {(name, variant): [] for name, _ in codes for variant in a.variants if "alone" in a.parts}
    for _ in range(a.runs if "alone" in a.parts else 0):
        for name, code in codes:
            for variant in a.variants:
                alone[name, variant].append(model_alone(code, a.work, folders[longest], model, 4096 // longest,
                                                        variant == "compiled"))
    print(f"\nModernBERT (demo_modernbert.json), {a.lang} packed rows, --tokens_per_step 4096, within documents, "
          f"CPU, median of {a.runs} runs ({started})\n")
    header(f"{'code':16} {'variant':9} {'seq':>5} {'steps':>5} {'first step s':>12} {'median step s':>13} "
           f"{'limit warnings':>14} {'run wall s':>10}")
    for name, variant, seq, n, first, median, warnings, wall in rows:
        print(f"{name:16} {variant:9} {seq:5d} {n:5d} {first:12.2f} {median:13.3f} {warnings:14d} {wall:10.0f}")
    print(f"\nthe model alone (one process, one thread): forward + backward on 16 batches of {4096 // longest} rows of "
          f"{longest} tokens, each its own documents; median of {a.runs} runs\n")
    header(f"{'code':16} {'variant':9} {'groups a batch':>14} {'first step s':>12} {'median step s':>13} {'frames':>6}")
    for (name, variant), done in alone.items():
        first = statistics.median(d["seconds"][0] for d in done)
        median = statistics.median(statistics.median(d["seconds"][4:]) for d in done)
        groups = ", ".join(map(str, done[0]["groups"]))
        print(f"{name:16} {variant:9} {groups:>14} {first:12.2f} {median:13.3f} {max(d['frames'] for d in done):6d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
