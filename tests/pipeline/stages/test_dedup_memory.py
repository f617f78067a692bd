"""dedup's memory is bounded by --memory-mb and a file, not by the corpus: six times the
documents, the same peak within the allocator's noise (102 MB, then 104 to 119 MB from run to
run), where the in-memory index it replaced grew by about 6 KB a kept document here (124 MB,
then 243 MB). bench/bench_dedup_scale.py measures it from 0.2 to 3 million documents."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.stages.ingest import ingest
from tests.helpers.dedup_reference import planted_documents
from tests.helpers.web_corpus import write_corpus

ROOT = Path(__file__).resolve().parents[3]
PEAK_OF_A_RUN = """
import resource, sys
from pipeline.cli import cli
try:
    cli(sys.argv[1:], prog_name="pipeline")
except SystemExit as end:
    assert not end.code, end.code
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def peak_mb(tmp_path: Path, documents: int) -> int:
    """Peak RSS (MB) of `pipeline --workers 1 dedup` (every step in one process) on a corpus of
    `documents` ingested into files of about 1 MB."""
    corpus = write_corpus(tmp_path / f"web{documents}.txt", [d for _k, d in planted_documents(1, documents)], "text")
    data = tmp_path / f"d{documents}"
    ingest(data_dir=data, lang="hu", workers=1, sources={"web": str(corpus)}, part_mb=1)
    args = ["--data-dir", str(data), "--lang", "hu", "--workers", "1", "-q", "dedup", "--no-wikipedia",
            "--memory-mb", "4"]
    res = subprocess.run([sys.executable, "-c", PEAK_OF_A_RUN, *args], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return int(res.stdout.split()[-1])


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_corpus(tmp_path):
    small, large = peak_mb(tmp_path, 4_000), peak_mb(tmp_path, 24_000)
    assert large - small < 40, (small, large)   # 20,000 more documents: under 2 KB each
