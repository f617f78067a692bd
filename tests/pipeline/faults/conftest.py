"""Fixtures of the pipeline's fault matrix (docs/reliability.md): one undisturbed run of every
stage on the sample dump (plus an ingested source, so that ingest and dedup run too), a small
tmpfs the test mounts (root only) and the way to run one stage under a fault.

Each stage of a cell reads the clean run's finished upstream (`--data-dir` = the clean run) and
writes to its own `--output`, so that a cell's outputs compare byte for byte with the clean run's.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from tests.helpers.kill_at_rename import FAULT_AT_NTH_RENAME
from tests.helpers.tmpfs import Tmpfs

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [ROOT / "tests" / "fixtures" / "formatted_hu" / f"AA_wiki_0{i}.txt" for i in (0, 1)]  # ingest's
ENCODED = "hdf5_lower_case_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_1"


@dataclass(frozen=True)
class StageCell:
    """A stage as the matrix runs it: its options, its output under DATA_DIR/hu (a folder, or
    report.html), and whether --output names the folder that holds it (encode's hdf5_... folder)."""

    args: tuple[str, ...]
    output: str
    output_is_parent: bool = False

    def cli_args(self, name: str, out_base: Path) -> list[str]:
        out = out_base if self.output_is_parent else out_base / self.output
        return [name, *self.args, "--output", str(out)]


STAGES = {   # every stage of the registry that writes (inspect and clean only read or remove)
    "download": StageCell(("--dump", str(ROOT / "data" / "sample" / "huwiki-sample.xml.bz2")), "download"),
    "extract": StageCell(("--task-mb", "0.02"), "extracted"),
    "format": StageCell((), "formatted"),
    "ingest": StageCell(("--source", f"web={SOURCES[0]}", "--source", f"news={SOURCES[1]}"), "ingested"),
    "dedup": StageCell((), "deduped"),
    "split": StageCell((), "sentences"),
    "filter": StageCell((), "filtered"),
    "shard": StageCell(("--num-shards", "2"), "sharded"),
    "vocab": StageCell(("--vocab-size", "300"), "vocab"),
    "encode": StageCell(("--max-seq", "128", "--max-pred", "20", "--dupe-factor", "1"), ENCODED,
                        output_is_parent=True),
    "probe": StageCell((), "probe"),
    "export": StageCell(("--format", "parquet"), "export/parquet"),
    "report": StageCell((), "report.html"),
}


def run_cli(args: list[str]):
    """The CLI in this process (a rerun: fast, no fault)."""
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="session")
def clean_data(tmp_path_factory) -> Path:
    """DATA_DIR of an undisturbed run of every stage, each as the matrix runs it."""
    data = tmp_path_factory.mktemp("clean")
    for name, stage in STAGES.items():
        out = data / "hu"
        res = run_cli(["--data-dir", data, "--lang", "hu", "--workers", "1",
                       *stage.cli_args(name, out)])
        assert res.exit_code == 0, res.output
    return data


def output_hashes(path: Path) -> dict[str, str]:
    """sha256 of every file of an output (a folder or one file). Of the manifest, what it says
    of the data (stage, input fingerprint, outputs with sizes and checksums): its options and
    summary name the output folder and its seconds; of report.html, all but the time it was
    written, and of other JSON the seconds things took."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    hashes = {}
    for p in files:
        data = p.read_bytes()
        if p.name == "manifest.json":
            manifest = json.loads(data)
            outputs = [{**o, "bytes": 0, "sha256": ""} if o["path"].endswith(".json") else o
                       for o in manifest["outputs"]]   # JSON outputs: compared below, timeless
            data = json.dumps([manifest["stage"], manifest["input"], outputs]).encode()
        elif p.suffix == ".json":   # vocab_report.json: how long training took
            data = json.dumps(_timeless(json.loads(data)), sort_keys=True).encode()
        elif p.suffix == ".html":
            data = re.sub(rb"written \d{4}-\d\d-\d\d \d\d:\d\d", b"", data)
        hashes[str(p.relative_to(path)) if path.is_dir() else p.name] = hashlib.sha256(data).hexdigest()
    return hashes


def _timeless(value):
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not k.endswith("seconds")}
    return [_timeless(v) for v in value] if isinstance(value, list) else value


def leftovers(path: Path) -> list[Path]:
    """Temporary files (common/atomic.py's .NAME.*.tmp) in or beside an output."""
    folder = path if path.is_dir() else path.parent
    return sorted(folder.rglob(".*.tmp")) if folder.exists() else []


@pytest.fixture
def small_disk(tmp_path):
    """A 32 MiB tmpfs at tmp_path/disk (tests/helpers/tmpfs.py)."""
    disk = Tmpfs(tmp_path / "disk", "32m")
    try:
        yield disk
    finally:
        disk.unmount()


@pytest.fixture(scope="session")
def fiu_run() -> str:
    """fiu-run (Debian's fiu-utils; .ci/run installs it): the way to an I/O error on read as
    root, where chmod 000 stops no read."""
    path = shutil.which("fiu-run")
    if path is None:
        pytest.skip("fiu-run (Debian fiu-utils) is not installed: no injected I/O error")
    return path


def run_faulted(action: str, nth: int, args: list[str], prefix: tuple[str, ...] = ()):
    """A child `pipeline` that meets `action` at its nth atomic rename (tests/helpers/kill_at_rename.py)."""
    cmd = [*prefix, sys.executable, "-c", FAULT_AT_NTH_RENAME, action, str(nth), *map(str, args)]
    # pyarrow's jemalloc thread can deadlock with fiu-run's malloc wrapper: the system allocator
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARROW_DEFAULT_MEMORY_POOL": "system"}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
