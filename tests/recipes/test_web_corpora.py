"""`make pretrain CORPORA=...` (recipes/web_corpora.py): --corpora NAME[=WEIGHT],... read and
checked before any stage (one line for a typo, a corpus without the language, an offline corpus
not cached); the dry run's ingest, dedup and `shard --weight` commands, its passes per source
and, past 4 passes on a GPU, the warning that names the corpora; the Makefile's CORPORA."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.core.errors import StageError
from recipes.web_corpora import parse_corpora
from tests.helpers.hub_corpus import fineweb2_repo
from tests.helpers.pretrain_cli import ROOT, pretrain

WEB = [[f"Ez a {i}. magyar weboldal, elég hosszú bekezdéssel a szavak számolásához és a tanuláshoz."]
       for i in range(200)]


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """A local copy laid out as HuggingFaceFW/fineweb-2 with a Hungarian and a Finnish part."""
    return fineweb2_repo(tmp_path_factory.mktemp("hub") / "fineweb-2", {"hun_Latn": WEB, "fin_Latn": WEB[:5]})


def test_corpora_and_their_weights_are_read_and_a_mistake_is_one_line():
    assert parse_corpora(["fineweb-2=0.5,wikipedia=2", "hplt-2"]) == [
        ("fineweb-2", 0.5), ("wikipedia", 2.0), ("hplt-2", 1.0)]
    assert parse_corpora(["fineweb-2:srp_Latn=3"]) == [("fineweb-2:srp_Latn", 3.0)]
    with pytest.raises(StageError, match=r"--corpus finweb-2: not a named corpus \(did you mean fineweb-2\?"):
        parse_corpora(["finweb-2"])
    with pytest.raises(StageError, match="the weight after '=' is a number >= 0"):
        parse_corpora(["fineweb-2=-1"])
    with pytest.raises(StageError, match="fineweb-2 is given twice"):
        parse_corpora(["fineweb-2", "fineweb-2=2"])


def dry_run(sample_dump, tmp_path, *extra):
    return pretrain("--lang", "hu", "--dump", sample_dump, "--dry-run", "--data-dir", tmp_path / "data",
                    "--runs", tmp_path / "runs", *extra)


@pytest.mark.parametrize("args,said", [
    (("--corpora", "fineweb-2", "--corpus-root", "MISSING"), "FineWeb-2 has no part for --lang hu (hu); its "
                                                             "nearest languages: fin_Latn"),
    (("--corpora", "fineweb-2"), "HF_HUB_OFFLINE is set"),
    (("--corpus-root", "COPY"), "--corpus-root and --max-tokens are for the web corpora of --corpora"),
    (("--corpora", "wikipedia=2"), "--corpora names no web corpus"),
])
def test_before_any_stage_a_corpus_that_cannot_be_had_is_one_line(sample_dump, copy, tmp_path, args, said):
    finnish = tmp_path / "fin"
    shutil.copytree(copy, finnish)
    shutil.rmtree(finnish / "data" / "hun_Latn")
    args = [str(finnish) if a == "MISSING" else str(copy) if a == "COPY" else a for a in args]
    res = pretrain("--lang", "hu", "--dump", sample_dump, "--data-dir", tmp_path / "data", "--runs",
                   tmp_path / "runs", "--device", "cpu", *args)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: ") and said in lines[0], lines
    assert res.stdout == "" and not (tmp_path / "data").exists()   # refused before any step


def test_the_dry_run_shows_ingest_dedup_the_weights_and_each_sources_passes(sample_dump, copy, tmp_path):
    res = dry_run(sample_dump, tmp_path, "--device", "cuda", "--gpu-memory", "80", "--corpora",
                  "fineweb-2=2,wikipedia=0.5", "--corpus-root", copy, "--max-tokens", "1000")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    order = [line.split(" --lang hu ")[1].split()[0] for line in out.splitlines()
             if line.startswith("$ python -m pipeline")]
    assert order[:8] == ["download", "extract", "format", "ingest", "dedup", "split", "filter", "shard"]
    assert f"ingest --corpus fineweb-2 --corpus-root {copy} --max-tokens 1000" in out
    assert "shard --weight fineweb-2=2 --weight wikipedia=0.5" in out
    # before the pipeline: Wikipedia from the dump, FineWeb-2's slice from --max-tokens, each x its weight
    passes = next(line for line in out.splitlines() if line.startswith("passes: "))
    assert "by source: wikipedia" in passes and "(weight 0.5)" in passes and "fineweb-2" in passes
    assert ("(estimated: Wikipedia from the dump (recipes/corpus_estimate.py), the web from what ingest took or "
            "its size on the Hub)") in passes
    warning = next(line for line in out.splitlines() if line.startswith("warning: the plan reads its text"))
    assert "more of fineweb-2 (its hun_Latn part holds about " in warning and "--max-tokens 1,000 takes " in warning
    assert "--corpora hplt-2 (or madlad-400, culturax)" in warning
    assert not (tmp_path / "data").exists() and not (tmp_path / "runs").exists()   # nothing written


def test_make_passes_corpora_on():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    printed = subprocess.run(["make", "-s", "-n", "-C", str(ROOT), "pretrain", "LANG=hu", "CORPORA=fineweb-2=0.5"],
                             capture_output=True, text=True, check=True).stdout
    line = next(x for x in printed.splitlines() if "recipes.pretrain" in x)
    assert "--lang hu " in line and "--corpora fineweb-2=0.5" in line


def test_the_rerun_under_make_names_corpora(monkeypatch):
    from common.make_vars import VIA_MAKE_ENV
    from recipes.pretrain_advice import rerun_command

    monkeypatch.setenv(VIA_MAKE_ENV, "1")
    assert rerun_command(["--lang", "hu", "--corpora", "fineweb-2=0.5", "--corpus-root", "/m"]) == (
        "make pretrain LANG=hu CORPORA=fineweb-2=0.5 PRETRAIN_OPTS='--corpus-root /m'")
