"""bench/run_all.py (`make bench`) finds every bench script and runs it, echoing its table."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.script_module import load_script

ROOT = Path(__file__).resolve().parents[2]
run_all = load_script("bench/run_all.py")


def test_finds_every_bench_script_and_selects_by_name():
    every = run_all.find_scripts(None)
    assert every == sorted((ROOT / "bench").glob("bench_*.py")) and every
    name = every[0].stem.removeprefix("bench_")
    assert run_all.find_scripts([name]) == [every[0]]
    with pytest.raises(SystemExit, match="no bench script for nosuch"):
        run_all.find_scripts(["nosuch"])


def test_runs_a_script_and_echoes_its_output(tmp_path):
    script = tmp_path / "bench_echo.py"
    script.write_text("import sys\nprint('| a | b |')\nprint('bar 1%\\rbar 100%  ')\n"
                      "print('args', sys.argv[1:])\n", encoding="utf-8")
    lines = []
    status, seconds = run_all.run_script(script, ["--runs", "1"], lines.append)
    assert status == 0 and seconds >= 0
    assert lines == ["| a | b |", "bar 100%", "args ['--runs', '1']"]


def test_machine_line_names_cores_and_python():
    text = "\n".join(run_all.machine())
    assert "cores" in text and "Python" in text
