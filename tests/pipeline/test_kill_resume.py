"""kill -9 in the middle of format, split, filter and shard, then a rerun: the final outputs are
byte-identical to an uninterrupted run's, and no temporary file is left behind.

The stage runs in a child process that SIGKILLs itself right before its N-th atomic rename
(os.replace), so the kill lands at a chosen point: after some tasks are finished, with a
finished-but-unrenamed temporary file on disk (for shard: with some shards renamed and others
not). (extract has its own kill -9 test in test_extract.py.)
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.stages.download import download
from pipeline.stages.extract import extract
from pipeline.stages.filter import filter_documents
from pipeline.stages.format import format_corpus
from pipeline.stages.shard import shard
from pipeline.stages.split import split
from tests.helpers.kill_at_rename import KILL_AT_NTH_RENAME

ROOT = Path(__file__).resolve().parents[2]

def final_bytes(out: Path) -> dict:
    """Every file of a stage's output except the manifest (it records seconds)."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


@pytest.fixture(scope="module")
def clean(sample_dump, tmp_path_factory) -> Path:
    """An uninterrupted run of every text stage on the sample, extracted into several files."""
    root = tmp_path_factory.mktemp("clean")
    download(data_dir=root, lang="hu", dump=sample_dump)
    extract(data_dir=root, lang="hu", workers=1, task_mb=0.02)
    format_corpus(data_dir=root, lang="hu", workers=1)
    split(data_dir=root, lang="hu", workers=1)
    filter_documents(data_dir=root, lang="hu", workers=1)
    shard(data_dir=root, lang="hu", workers=1, num_shards=4, test_fraction=0.1)
    return root / "hu"


STAGES = {  # stage -> (CLI args, upstream folder, own folder, function for the rerun)
    "format": ([], "extracted", "formatted", format_corpus, {}),
    "split": ([], "formatted", "sentences", split, {}),
    "filter": ([], "sentences", "filtered", filter_documents, {}),
    "shard": (["--num-shards", "4", "--test-fraction", "0.1"], "filtered", "sharded", shard,
              {"num_shards": 4, "test_fraction": 0.1}),
}


@pytest.mark.slow
@pytest.mark.faults   # the kill -9 cell of docs/reliability.md's matrix
@pytest.mark.parametrize("stage", list(STAGES))
def test_kill_9_mid_stage_then_rerun_is_byte_identical(clean, tmp_path, stage):
    args, upstream, own, func, kwargs = STAGES[stage]
    n_inputs = len([p for p in (clean / upstream).rglob("*") if p.is_file() and p.name != "manifest.json"])
    assert n_inputs >= 3, "the sample should extract into several files"
    # The rename to die at: run.json is the 1st; then (output, marker) per task -> die on the
    # 2nd task's output. shard: run.json, (the arrays, the marker) of each file's scan, then its
    # shards -> die between the shard renames.
    nth = 1 + 2 * n_inputs + 3 if stage == "shard" else 4
    out = tmp_path / own
    cmd = [sys.executable, "-c", KILL_AT_NTH_RENAME, str(nth), "--lang", "hu", "--workers", "1",
           stage, "--input", str(clean / upstream), "--output", str(out), *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == -9, res.stderr  # killed, not finished
    assert not (out / "manifest.json").exists()
    assert list(out.rglob(".*.tmp")), "the kill should leave a temporary file behind"

    func(lang="hu", workers=1, input=clean / upstream, output=out, **kwargs)
    assert final_bytes(out) == final_bytes(clean / own)
    assert not list(out.rglob(".*.tmp"))
