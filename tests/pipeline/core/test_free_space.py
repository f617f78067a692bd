"""Before a stage writes, its estimate of the output is checked against the free disk space:
one line when it will not fit, and nothing written."""
from __future__ import annotations

import shutil
from collections import namedtuple
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core import runner
from pipeline.core.errors import StageError
from pipeline.core.runner import StageRun

Usage = namedtuple("Usage", "total used free")
FORMATTED = Path(__file__).resolve().parents[2] / "fixtures" / "formatted_hu"


@pytest.fixture
def disk_with(monkeypatch):
    """disk_with(free_bytes): the runner sees that much free space."""
    def set_free(free: int):
        monkeypatch.setattr(runner.shutil, "disk_usage", lambda path: Usage(10**12, 0, free))
    return set_free


def test_a_stage_that_will_not_fit_stops_before_writing(tmp_path, disk_with):
    disk_with(5_000)
    out = tmp_path / "a" / "b"                      # not there yet: its existing parent is asked
    with pytest.raises(StageError, match=r"will write about 20.0 KB to .* only 5.0 KB are free"):
        StageRun("format", out, {}, "fp", expected_bytes=20_000)
    assert not out.exists()
    StageRun("format", out, {}, "fp", expected_bytes=4_000)   # fits
    # a resumed run needs only what its folder does not hold yet
    (out / "part.txt").write_bytes(b"x" * 17_000)
    StageRun("format", out, {}, "fp", expected_bytes=20_000)


def test_the_cli_says_it_in_one_line(tmp_path, disk_with):
    data = tmp_path / "data"
    shutil.copytree(FORMATTED, data / "hu" / "formatted")
    disk_with(100)
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "split"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    (line,) = [ln for ln in res.output.splitlines() if ln.strip()]
    assert line.startswith("Error: split will write about") and "pipeline clean --keep" in line
    assert not list((data / "hu").glob("sentences/*.txt"))
