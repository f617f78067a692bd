"""A rerun of `pipeline run` (`make corpus` with nothing to do) rewrites report.html with the
training and downstream sections that `pipeline report --run … --downstream …` added (issue 38:
they were lost); `--forget-runs` leaves them out."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from tests.helpers.downstream_results import write_results
from tests.pipeline.report.test_report import sections, write_train_run


@pytest.mark.slow
def test_a_rerun_of_run_keeps_the_runs_and_results_a_report_added(sample_dump, tmp_path):
    data = tmp_path / "data"
    run_args = ["--data-dir", str(data), "--lang", "hu", "--workers", "1", "run", "--dump",
                str(sample_dump), "--vocab-size", "600", "--dupe-factor", "1", "--encode", "128/20"]
    assert CliRunner().invoke(cli, run_args).exit_code == 0
    run = write_train_run(tmp_path / "p1")
    results = write_results(tmp_path / "elsewhere" / "results.json")
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--run",
                                   str(run), "--downstream", str(results)])
    assert res.exit_code == 0, res.output
    page = data / "hu" / "report.html"

    again = CliRunner().invoke(cli, run_args)   # every stage already done
    assert again.exit_code == 0 and "encode: already done" in again.output
    found = sections(page.read_text(encoding="utf-8"))
    assert str(run) in found["training"] and "<img" in found["training"]
    assert "0.610 ± 0.012" in found["downstream"]

    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--forget-runs"])
    assert res.exit_code == 0, res.output
    found = sections(page.read_text(encoding="utf-8"))
    assert str(run) not in found["training"] and "0.610" not in found["downstream"]
