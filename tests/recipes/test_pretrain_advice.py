"""What `make pretrain` says besides its steps (recipes/pretrain_advice.py): the command to
rerun in the form the user typed, --dump and --lang checked before any step, the probe's time."""
from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

from common.make_vars import VIA_MAKE_ENV
from recipes.pretrain_advice import input_problem, probe_estimate, rerun_command


def test_the_rerun_command_is_the_script_or_make_with_the_same_arguments(monkeypatch):
    argv = ["--lang", "ja", "--data-dir", "data", "--budget", "30m", "--dump", "ja wiki.xml.bz2",
            "--vocab-size", "8000"]
    monkeypatch.delenv(VIA_MAKE_ENV, raising=False)
    assert rerun_command(argv) == ("python -m recipes.pretrain --lang ja --data-dir data --budget 30m "
                                   "--dump 'ja wiki.xml.bz2' --vocab-size 8000")
    monkeypatch.setenv(VIA_MAKE_ENV, "1")   # the Makefile's recipe sets it
    assert rerun_command(argv) == ("make pretrain LANG=ja DUMP='ja wiki.xml.bz2' "
                                   "PRETRAIN_OPTS='--vocab-size 8000'")
    assert rerun_command(argv, force=True) == ("make pretrain LANG=ja DUMP='ja wiki.xml.bz2' "
                                               "PRETRAIN_OPTS='--vocab-size 8000 --force'")
    short = ["--lang", "uk", "--data-dir", "/d", "--budget", "2h", "--workers=4"]
    assert rerun_command(short, force=True) == \
        "make pretrain LANG=uk BUDGET=2h DATA_DIR=/d WORKERS=4 PRETRAIN_OPTS=--force"


def test_the_command_that_goes_on_leaves_out_the_force_that_started_the_run(monkeypatch):
    # a run started with --force and then interrupted goes on without it (with it, every
    # stage would be redone and training would start again from step 0)
    argv = ["--lang", "hu", "--force", "--vocab-size", "8000"]
    monkeypatch.delenv(VIA_MAKE_ENV, raising=False)
    assert rerun_command(argv) == "python -m recipes.pretrain --lang hu --vocab-size 8000"
    assert rerun_command(argv, force=True) == "python -m recipes.pretrain --lang hu --vocab-size 8000 --force"
    monkeypatch.setenv(VIA_MAKE_ENV, "1")
    assert rerun_command(argv) == "make pretrain LANG=hu PRETRAIN_OPTS='--vocab-size 8000'"
    assert rerun_command(["--lang", "hu", "--force"]) == "make pretrain LANG=hu"


def test_a_folder_as_dump_is_named_a_folder_with_the_file_to_give(tmp_path, sample_dump, monkeypatch):
    monkeypatch.delenv(VIA_MAKE_ENV, raising=False)
    folder = Path(sample_dump).parent
    problem = input_problem(Namespace(dump=folder, lang="hu"))
    assert problem == (f"--dump {folder} is a folder: give the dump file itself, e.g. --dump "
                       f"{folder / Path(sample_dump).name}")
    assert "is a folder: give the dump file itself (a .xml" in input_problem(Namespace(dump=tmp_path, lang="hu"))
    assert input_problem(Namespace(dump=tmp_path / "no.xml.bz2", lang="hu")).endswith("does not exist")
    assert input_problem(Namespace(dump=Path(sample_dump), lang="hu")) is None
    monkeypatch.setenv(VIA_MAKE_ENV, "1")
    wrong = input_problem(Namespace(dump=Path(sample_dump), lang="uk"))
    assert "is the dump of huwiki" in wrong and wrong.endswith("use LANG=hu")


def test_the_probe_estimate_comes_from_the_runs_pace(tmp_path):
    assert probe_estimate(tmp_path, 5000, "cpu") == ""   # no pace logged: no guess
    (tmp_path / "train_log.jsonl").write_text(
        json.dumps({"step": 20, "loss": 7.0, "samples_per_sec": 30.0}) + "\n"
        + json.dumps({"step": 20, "eval_loss": 7.0}) + "\n"
        + json.dumps({"step": 40, "loss": 6.0, "samples_per_sec": 60.0}) + "\n")
    # 2 variants x 3 seeds x 2,000 rows (the CPU limit) x 3 epochs at 60 samples/s
    assert probe_estimate(tmp_path, 5000, "cpu") == "about 10 minutes"
    assert probe_estimate(tmp_path, 461, "cpu") == "about 2 minutes"
    assert probe_estimate(tmp_path, 20000, "cuda") == "about 1.7 hours"   # every row on a GPU


def test_the_probe_estimate_of_a_long_run_uses_its_short_rows_pace(tmp_path):
    """Issue 52: under --long the last phase's pace (2,048-token rows at 1 sample/s) made the
    estimate 35x too long; the probe runs 128-token rows, as the first phase does."""
    records = [{"step": 1, "phase_start": 1, "seq_len": 128, "max_pred": 40},
               {"step": 20, "loss": 7.0, "samples_per_sec": 60.0},
               {"step": 21, "phase_start": 2, "seq_len": 512, "max_pred": 160},
               {"step": 40, "loss": 6.5, "samples_per_sec": 12.0},
               {"step": 41, "phase_start": 3, "seq_len": 2048, "max_pred": 640},
               {"step": 60, "loss": 6.4, "samples_per_sec": 1.0}]
    (tmp_path / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert probe_estimate(tmp_path, 5000, "cpu") == "about 10 minutes"   # 60 rows/s, as above
    # a run whose shortest rows are 512 tokens: 12 rows/s there, about 48 of the probe's 128
    (tmp_path / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[2:]))
    assert probe_estimate(tmp_path, 5000, "cpu") == "about 12 minutes"



def test_device_says_what_it_picks(capsys):
    """Issue 52: --device had no help text (argparse then shows neither help nor its default)."""
    import pytest

    import recipes.pretrain as script

    with pytest.raises(SystemExit):
        script.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--device {auto,cpu,cuda} auto: every visible CUDA GPU" in help_text
    assert "else the CPU (up to 4 ranks) (default: auto)" in help_text
