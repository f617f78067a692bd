"""The `pipeline` group: help texts, language validation, and no torch in the stages."""
from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from pipeline.cli import cli

STAGES = ["download", "extract", "format", "ingest", "dedup", "split", "filter", "vocab", "shard",
          "encode", "probe", "joint-vocab", "inspect", "run", "report", "clean"]


def test_every_stage_is_registered_and_explains_itself():
    runner = CliRunner()
    top = runner.invoke(cli, ["--help"])
    assert top.exit_code == 0
    for stage in STAGES:
        assert stage in top.output
        res = runner.invoke(cli, [stage, "--help"])
        assert res.exit_code == 0, res.output
        assert "Usage: " in res.output and len(res.output.splitlines()) > 4


def test_every_option_of_every_command_has_a_line_of_help():
    ctx = click.Context(cli)
    commands = [("pipeline", cli)] + [(name, cli.get_command(ctx, name)) for name in cli.list_commands(ctx)]
    bare = [f"{name} {p.opts[0]}" for name, cmd in commands for p in cmd.params
            if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert bare == [], f"options without help: {bare}"


@pytest.mark.parametrize("bad", ["../x", "/etc", "hu/../../x", "HU", "h", "", "hu wiki"])
def test_lang_that_is_not_a_language_code_is_refused_before_writing(tmp_path, bad):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--lang", bad, "format"])
    assert res.exit_code == 2
    assert "--lang" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("good", ["hu", "uk", "simple", "zh-min-nan", "be-x-old", "zh_yue"])
def test_real_wikipedia_codes_are_accepted(good):
    res = CliRunner().invoke(cli, ["--lang", good, "format", "--help"])
    assert res.exit_code == 0


def test_pipeline_stages_never_import_torch_transformers_or_matplotlib():
    code = ("import sys, importlib, pipeline.cli, pipeline.core.registry as r; "
            "[importlib.import_module(s.module) for s in r.STAGES]; "
            "bad = [m for m in ('torch', 'transformers', 'deepspeed', 'matplotlib') if m in sys.modules]; "
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("args, hint", [
    (["run", "--lang", "el"], "pipeline --lang LANG run ..."),
    (["shard", "--data-dir", "d"], "pipeline --data-dir DATA_DIR shard ..."),
    (["encode", "-q"], "pipeline -q encode ..."),
])
def test_a_global_option_after_the_stage_name_says_where_it_goes(args, hint):
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "global options go before the stage name" in res.output
    assert hint in res.output
    other = CliRunner().invoke(cli, ["shard", "--bogus"])
    assert other.exit_code == 2 and "global" not in other.output


@pytest.mark.parametrize("typed, meant", [("extarct", "extract"), ("encdoe", "encode"),
                                          ("repot", "report"), ("vocabs", "vocab")])
def test_a_misspelled_stage_gets_did_you_mean(typed, meant):
    res = CliRunner().invoke(cli, [typed, "--help"])
    assert res.exit_code == 2 and f"No such command '{typed}'" in res.output
    assert f"Did you mean '{meant}'?" in res.output and "Traceback" not in res.output
    far = CliRunner().invoke(cli, ["zzzz"])
    assert far.exit_code == 2 and "Did you mean" not in far.output
