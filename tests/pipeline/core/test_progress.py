"""Progress on a stderr that is no terminal (a log file, a pipe): plain lines at most every N
seconds and one at the end, never tqdm's carriage-return redraws; on a terminal, tqdm's bar."""
from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.core import report
from pipeline.core.report import PlainProgress, duration, progress
from tests.helpers.fake_clock import Clock

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def clock(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="pipeline")
    c = Clock()
    monkeypatch.setattr(report.time, "monotonic", c)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    return c


def lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "pipeline"]


def test_a_line_at_most_every_n_seconds_and_one_at_the_end(clock, caplog):
    with PlainProgress(total=353, desc="extract", unit="task", every=30) as bar:
        for _ in range(353):
            clock.now += 0.25      # 88 s in all
            bar.update()
    assert lines(caplog) == [
        "extract: 120/353 tasks (34%), 30 s, about 58 s left",
        "extract: 240/353 tasks (68%), 1 min 00 s, about 28 s left",
        "extract: 353/353 tasks (100%), 1 min 28 s",
    ]


def test_short_work_prints_nothing_and_an_error_no_last_line(clock, caplog):
    with PlainProgress(total=10, desc="format", unit="file", every=30) as bar:
        bar.update(10)
    assert lines(caplog) == []
    with pytest.raises(RuntimeError):
        with PlainProgress(total=None, desc="download", unit="B", every=30) as bar:
            clock.now += 31
            bar.update(5_000_000)
            bar.update(1)
            raise RuntimeError("network")
    assert lines(caplog) == ["download: 5.0 MB, 31 s"]   # bytes, no total: no percentage


def test_iteration_and_the_quiet_switches(clock, caplog, monkeypatch):
    monkeypatch.setattr(report, "_stderr_is_terminal", lambda: False)
    report.set_progress_every(0)
    try:
        assert list(progress(["a", "b"], desc="shard: write", unit="file")) == ["a", "b"]
        assert lines(caplog) == ["shard: write: 1/2 files (50%), 0 s, about 0 s left",
                                 "shard: write: 2/2 files (100%), 0 s"]
        caplog.clear()
        assert list(progress(["a"], desc="x", disable=True)) == ["a"]
        monkeypatch.setenv("TQDM_DISABLE", "1")
        assert list(progress(["a"], desc="x")) == ["a"]
        monkeypatch.delenv("TQDM_DISABLE")
        caplog.set_level(logging.WARNING, logger="pipeline")   # pipeline -q
        assert list(progress(["a"], desc="x")) == ["a"]
        assert lines(caplog) == []
    finally:
        report.set_progress_every(None)


def test_the_interval_comes_from_the_environment_unless_set(monkeypatch):
    monkeypatch.setenv(report.PROGRESS_EVERY_ENV, "5")
    assert report.progress_every() == 5
    report.set_progress_every(2.5)
    try:
        assert report.progress_every() == 2.5
    finally:
        report.set_progress_every(None)
    monkeypatch.delenv(report.PROGRESS_EVERY_ENV)
    assert report.progress_every() == 30


def test_a_terminal_still_gets_the_tqdm_bar(monkeypatch):
    from tqdm import tqdm

    monkeypatch.setattr(report, "_stderr_is_terminal", lambda: True)
    with progress(total=3, desc="x", disable=True) as bar:
        assert isinstance(bar, tqdm)


def test_durations():
    assert [duration(s) for s in (0.4, 40, 725, 7380)] == ["0 s", "40 s", "12 min 05 s", "2 h 03 min"]


@pytest.mark.slow
def test_pipeline_run_logged_to_a_file_has_plain_lines_and_no_carriage_return(sample_dump, tmp_path):
    """`make corpus ... 2> log`: the real CLI with stderr to a file."""
    log_file = tmp_path / "log"
    env = {**os.environ, "PYTHONUTF8": "1", "WIKI2BERT_PROGRESS_EVERY": "0"}
    env.pop("TQDM_DISABLE", None)
    with open(log_file, "wb") as err:
        proc = subprocess.run(
            [sys.executable, "-m", "pipeline", "--data-dir", str(tmp_path / "data"), "--workers", "1",
             "run", "--dump", str(sample_dump), "--vocab-size", "600", "--dupe-factor", "1",
             "--encode", "128/20"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err,
            timeout=300)
    text = log_file.read_bytes()
    assert proc.returncode == 0, text.decode()[-2000:]
    assert b"\r" not in text
    shown = [line for line in text.decode().splitlines() if re.match(r"encode: \d+/\d+ shards", line)]
    assert len(shown) > 2
    assert re.fullmatch(r"encode: (\d+)/\1 shards \(100%\), \d+ s", shown[-1]), shown[-1]
    assert "run: all stages done" in text.decode()
