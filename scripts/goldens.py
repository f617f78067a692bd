"""Golden hashes of what the product writes, so that a refactor can show it changed nothing:
every HDF5 file and vocabulary file of the pipeline for each tokenizer kind, and the trainer's
per-step losses, output_dir vocabulary and export for each model family, on real text.

Usage:
    python scripts/goldens.py --work /tmp/goldens --out before.json      # on the old commit
    python scripts/goldens.py --work /tmp/goldens --out after.json       # on the new one
    python scripts/goldens.py --compare before.json after.json           # "identical", or each difference
    python scripts/goldens.py --work W --out x.json --only pipeline      # or trainer (needs pipeline's data)
    python scripts/goldens.py --hash FILE --work W                       # one file's hash, as the goldens take it

Inputs: the shipped sample (data/sample/huwiki-sample.xml.bz2); the uk and vi dumps of
../shared/data (--shared; left out when absent); Japanese text for MeCab (--ja-text, one
sentence a line and a blank line between documents, e.g. bench/unspaced_corpus.py's
jadoc_train.txt; left out when not given); the Chinese fixture of the tests (jieba). What is
built once and must be the same for both runs (a Unigram tokenizer.json per language, trained
by the `tokenizers` library, and the Japanese subset) is kept in WORK/inputs and reused; the
data directory WORK/data is made anew each time. Every command runs through the CLI, as a
user runs it (scripts/goldens_jobs.py lists them), with two workers and one torch thread.

The hashes: sha256 of every file the pipeline's vocab, joint-vocab and encode stages write
(the stage manifests too, with timings dropped and WORK's path replaced); for each training
run the logged losses, learning rate and gradient norm at every step, the vocabulary files in
its output_dir, and every file of its export (the model card with WORK's path replaced).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from goldens_jobs import pipeline_jobs, trainer_jobs  # this tool's list of commands, beside it

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run by path in a checkout: the product and the tests' tokenizer builder
    sys.path.insert(0, str(ROOT))

# JSON keys that hold timings or machine facts, never compared
VOLATILE = ("seconds", "elapsed", "started", "finished", "host", "date", "time", "pid", "git")
# a run's files that are the run's record (rewritten by design), not its outputs
RUN_RECORD = {"hparams.json", "train_log.jsonl", "run_log.jsonl", "git_diff.patch", "resumes.jsonl"}
LOSS_KEYS = ("loss", "mlm_loss", "nsp_loss", "lr", "grad_norm", "eval_loss", "eval_mlm_loss",
             "eval_mlm_acc", "eval_nsp_loss", "eval_nsp_acc")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _clean(value, work: str):
    if isinstance(value, dict):
        return {k: _clean(v, work) for k, v in value.items()
                if not any(word in k.lower() for word in VOLATILE)}
    if isinstance(value, list):
        return [_clean(v, work) for v in value]
    if isinstance(value, str):
        return value.replace(work, "WORK")
    return value


def file_hash(path: Path, work: str) -> str:
    """The file's sha256; manifests and reports with timings dropped and WORK's path replaced;
    other text files with WORK's path (and a model card's date) replaced."""
    data = path.read_bytes()
    if path.suffix == ".json":
        try:
            value = json.loads(data)
        except ValueError:
            return sha(data)
        if path.name == "manifest.json":   # its input fingerprint and report checksums: timings, paths
            value.pop("input", None)
            for out in value.get("outputs") or []:
                if "report" in out.get("path", ""):
                    out.pop("sha256", None), out.pop("bytes", None)
        if path.name == "manifest.json" or "report" in path.name:
            return sha(json.dumps(_clean(value, work), sort_keys=True).encode())
    if path.suffix == ".md":   # the model card: its export date, WORK's path, the device's timings
        data = re.sub(rb"\d{4}-\d{2}-\d{2}", b"DATE", data)
        data = re.sub(rb"(?s)<!-- device -->.*?<!-- /device -->", b"DEVICE", data)
    if path.suffix in (".json", ".md", ".txt"):
        return sha(data.replace(work.encode(), b"WORK"))
    return sha(data)


def folder_hashes(folder: Path, work: str, skip=()) -> dict:
    """{relative path: hash} of every file under `folder` (work/ folders of stages left out)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if not p.is_file() or rel.startswith((".", "work/")) or "/." in rel or p.name in skip:
            continue
        if p.name.startswith(".") or "/work/" in f"/{rel}":
            continue
        out[rel] = file_hash(p, work)
    return out


def run(cmd: list, log, env=None) -> None:
    """One command; its output goes to the log; a failure stops the script with its tail."""
    cmd = [str(c) for c in cmd]
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    res = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    if res.returncode:
        raise SystemExit(f"failed ({res.returncode}): {' '.join(cmd)}; see the log")


def run_pipeline(work: Path, inputs: Path, shared: Path | None, ja_text: Path | None, log) -> dict:
    data = work / "data"
    if data.exists():
        shutil.rmtree(data)
    hashes = {}
    pipeline = [sys.executable, "-m", "pipeline", "--data-dir", data, "--workers", "2", "-q"]
    for name, args, outputs in pipeline_jobs(data, inputs, shared, ja_text):
        t0 = time.time()
        if callable(args):
            args()
        else:
            run([*pipeline, *args], log)
        for out in outputs:
            if out.is_dir():
                for rel, h in folder_hashes(out, str(work)).items():
                    hashes[f"pipeline/{name}/{out.relative_to(data).as_posix()}/{rel}"] = h
        print(f"  {name}: {time.time() - t0:.1f} s", flush=True)
    return hashes


def run_trainer(work: Path, inputs: Path, log) -> dict:
    data, runs = work / "data", work / "runs"
    if runs.exists():
        shutil.rmtree(runs)
    runs.mkdir(parents=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    hashes = {}
    for name, argv, export_argv in trainer_jobs(data, runs, inputs):
        t0 = time.time()
        out = runs / name
        run([sys.executable, ROOT / "trainer" / "run_pretraining.py", *argv, "--output_dir", out], log, env)
        for line in (out / "train_log.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            hashes[f"trainer/{name}/losses/{r['step']:04d}"] = json.dumps(
                {k: r[k] for k in LOSS_KEYS if k in r}, sort_keys=True)
        for p in sorted(out.iterdir()):
            if p.is_file() and p.name not in RUN_RECORD:
                # the model's config under its old name or its neutral one: the same content
                key = "model_config.json" if p.name in ("bert_config.json", "model_config.json") else p.name
                hashes[f"trainer/{name}/output_dir/{key}"] = file_hash(p, str(work))
        hf = runs / f"{name}_hf"
        run([sys.executable, "-m", "trainer.export", "--checkpoint_dir", out, "--output", hf, *export_argv],
            log, env)
        for rel, h in folder_hashes(hf, str(work)).items():
            hashes[f"trainer/{name}/export/{rel}"] = h
        print(f"  {name}: {time.time() - t0:.1f} s", flush=True)
    return hashes


def compare(a: dict, b: dict) -> int:
    ha, hb = a["hashes"], b["hashes"]
    missing, added = sorted(set(ha) - set(hb)), sorted(set(hb) - set(ha))
    changed = sorted(k for k in set(ha) & set(hb) if ha[k] != hb[k])
    for title, keys in (("only in the first", missing), ("only in the second", added), ("different", changed)):
        for k in keys:
            print(f"{title}: {k}")
    print(f"{len(ha)} and {len(hb)} hashes: {len(set(ha) & set(hb)) - len(changed)} identical, "
          f"{len(changed)} different, {len(missing)} only in the first, {len(added)} only in the second")
    return 1 if missing or added or changed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, help="scratch folder (data/, runs/, inputs/ under it)")
    p.add_argument("--out", type=Path, help="the hashes, as JSON")
    p.add_argument("--inputs", type=Path, help="inputs built once and reused [default: WORK/inputs]")
    p.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data",
                   help="folder of ukwiki.xml.xz and viwiki.xml.xz [default: ../shared/data]")
    p.add_argument("--ja-text", type=Path, help="Japanese text (bench/unspaced_corpus.py's jadoc_train.txt)")
    p.add_argument("--only", choices=("pipeline", "trainer"))
    p.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    p.add_argument("--hash", type=Path, metavar="FILE", help="print FILE's hash (WORK's path and timings left out)")
    a = p.parse_args(argv)
    if a.hash:
        print(file_hash(a.hash, str((a.work or a.hash.parent).resolve())))
        return 0
    if a.compare:
        return compare(*(json.loads(f.read_text()) for f in a.compare))
    if a.work is None or a.out is None:
        p.error("--work and --out are needed (or --compare A B)")
    work = a.work.resolve()
    inputs = (a.inputs or work / "inputs").resolve()
    inputs.mkdir(parents=True, exist_ok=True)
    shared = a.shared if a.shared and (a.shared / "ukwiki.xml.xz").is_file() else None
    hashes = {}
    with open(work / "goldens.log", "w", encoding="utf-8") as log:
        if a.only in (None, "pipeline"):
            hashes.update(run_pipeline(work, inputs, shared, a.ja_text, log))
        if a.only in (None, "trainer"):
            hashes.update(run_trainer(work, inputs, log))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    a.out.write_text(json.dumps({"commit": commit, "hashes": hashes}, indent=1, sort_keys=True) + "\n")
    print(f"{len(hashes)} hashes -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
