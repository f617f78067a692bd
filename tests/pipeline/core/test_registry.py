"""The stage registry: one list that the CLI, its help, `pipeline run` and the folders read."""
from __future__ import annotations

import importlib

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.core.registry import BY_NAME, STAGES, pipeline_stages, stage_dir


def test_every_stage_runs_after_what_it_reads():
    order = [s.name for s in pipeline_stages()]
    assert order == ["download", "extract", "format", "ingest", "dedup", "split", "filter", "shard",
                     "vocab", "encode", "probe"]
    for stage in pipeline_stages():
        for needed in stage.upstream + stage.also_reads + stage.prefers:
            assert order.index(needed) < order.index(stage.name), (stage.name, needed)


def test_each_stage_module_is_named_after_its_command_and_defines_it():
    for stage in STAGES:
        module = importlib.import_module(stage.module)
        assert stage.module == f"pipeline.stages.{stage.name.replace('-', '_')}"   # joint-vocab: joint_vocab.py
        assert module.command.name == stage.name


def test_the_help_lists_the_stages_in_the_order_run_runs_them():
    help_text = CliRunner().invoke(cli, ["--help"]).output
    positions = [help_text.index(f"  {s.name} ") for s in pipeline_stages()]
    assert positions == sorted(positions)
    run_help = CliRunner().invoke(cli, ["run", "--help"]).output
    assert ", ".join(s.name for s in pipeline_stages()) in " ".join(run_help.split())


def test_folders_come_from_the_registry(tmp_path):
    assert stage_dir(tmp_path, "hu", "split") == tmp_path / "hu" / "sentences"
    assert {s.name: s.output for s in STAGES if s.output} == {
        "download": "download", "extract": "extracted", "format": "formatted", "ingest": "ingested",
        "dedup": "deduped", "split": "sentences",
        "filter": "filtered", "shard": "sharded", "vocab": "vocab", "probe": "probe", "export": "export"}
    assert BY_NAME["encode"].output is None   # named after its options (hdf5_lower_case_...)
    with pytest.raises(StageError, match="not a Wikipedia language code"):
        stage_dir(tmp_path, "../x", "split")


def test_several_languages_and_their_shared_folder(tmp_path):
    from pipeline.core.registry import joint_dir, validate_langs

    assert validate_langs("hu") == ("hu",)
    assert validate_langs("hr,sr,bs") == ("hr", "sr", "bs")
    assert joint_dir(tmp_path, ("hr", "sr", "bs")) == joint_dir(tmp_path, ("bs", "hr", "sr")) \
        == tmp_path / "multi" / "bs+hr+sr"
    for bad, message in (("hr,sr,hr", "hr given twice"), ("hr,,sr", "an empty code"),
                         ("hr,../x", "'../x' is not a Wikipedia language code")):
        with pytest.raises(StageError, match=message):
            validate_langs(bad)
    assert [s.name for s in STAGES if s.several_langs] == ["joint-vocab", "run"]


def test_a_misspelt_code_gets_the_nearest_wikipedia():
    from pipeline.text.wikipedias import close_codes

    assert [close_codes(c)[0] for c in ("hrr", "bss", "ukr", "vie", "zh-min-na")] == \
        ["hr", "bs", "uk", "vi", "zh-min-nan"]
