"""The stage runner: options checked against an earlier run, finished tasks skipped, markers
with the files a task wrote, the manifest last, the summary line."""
from __future__ import annotations

import json
import logging

import pytest

from common.atomic import atomic_open
from pipeline.core.errors import StageError
from pipeline.core.runner import FORCE_HINT_ENV, StageRun, Task


def write_upper(job):
    src, dst = job
    with atomic_open(dst) as fh:
        fh.write(src.read_text(encoding="utf-8").upper())
    return {"chars": dst.stat().st_size}


def make_inputs(tmp_path, n=4):
    src = tmp_path / "in"
    src.mkdir()
    for i in range(n):
        (src / f"f{i}.txt").write_text(f"text {i}\n", encoding="utf-8")
    return sorted(src.iterdir())


def tasks_for(files, out):
    return [Task(f.name, (f, out / f.name), outputs=(out / f.name,)) for f in files]


@pytest.mark.parametrize("workers", [1, 2])
def test_tasks_run_once_and_a_rerun_skips_them(tmp_path, workers, caplog):
    files, out = make_inputs(tmp_path), tmp_path / "out"
    run = StageRun("demo", out, {"a": 1}, "fp", workers=workers)
    infos = [info for _, info in run.run_tasks(tasks_for(files, out), write_upper)]
    assert [i["chars"] for i in infos] == [7] * 4
    with caplog.at_level(logging.INFO, logger="pipeline"):
        summary = run.finish({"files": 4}, outputs=[out / f.name for f in files])
    assert summary == {"files": 4} and "demo: files 4" in caplog.text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"] == {"a": 1} and len(manifest["outputs"]) == 4
    assert not (out / ".stage").exists()
    again = StageRun("demo", out, {"a": 1}, "fp", workers=workers)
    assert again.complete
    with caplog.at_level(logging.INFO, logger="pipeline"):
        assert again.skip() == {"files": 4}
    assert "already done" in caplog.text


def test_an_interrupted_run_redoes_only_unfinished_tasks_and_missing_files(tmp_path):
    files, out = make_inputs(tmp_path), tmp_path / "out"
    calls = []

    def dies_on_third(job):
        calls.append(job[0].name)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return write_upper(job)

    run = StageRun("demo", out, {}, "fp", workers=1)
    with pytest.raises(KeyboardInterrupt):
        list(run.run_tasks(tasks_for(files, out), dies_on_third))
    (out / "f0.txt").unlink()           # a finished task whose file is gone is done again
    calls.clear()

    def counts(job):
        calls.append(job[0].name)
        return write_upper(job)

    run = StageRun("demo", out, {}, "fp", workers=1)
    results = list(run.run_tasks(tasks_for(files, out), counts))
    assert calls == ["f0.txt", "f2.txt", "f3.txt"]
    assert [info["chars"] for _, info in results] == [7] * 4   # f1 from its marker


def test_changed_options_or_input_are_refused_unless_force(tmp_path):
    out = tmp_path / "out"
    StageRun("demo", out, {"a": 1}, "fp").finish({})
    with pytest.raises(StageError, match=r"a: 1 -> 2.*--force"):
        StageRun("demo", out, {"a": 2}, "fp")
    with pytest.raises(StageError, match="its input changed"):
        StageRun("demo", out, {"a": 1}, "other")
    (out / "stale.txt").write_text("x")
    run = StageRun("demo", out, {"a": 2}, "fp", force=True)
    assert not run.complete and not (out / "stale.txt").exists()


def test_a_wrapper_names_its_own_way_to_pass_force(tmp_path, monkeypatch):
    """Issue 46: under `make pretrain` the refusal names PRETRAIN_OPTS=--force, not a flag that
    make pretrain does not take."""
    out = tmp_path / "out"
    StageRun("vocab", out, {"vocab_size": 2000}, "fp").finish({})
    monkeypatch.setenv(FORCE_HINT_ENV, "to redo it with these settings: make pretrain LANG=ja "
                                       "PRETRAIN_OPTS='--vocab-size 8000 --force'")
    with pytest.raises(StageError) as err:
        StageRun("vocab", out, {"vocab_size": 8000}, "fp")
    assert str(err.value).endswith("(vocab_size: 2000 -> 8000): to redo it with these settings: make "
                                   "pretrain LANG=ja PRETRAIN_OPTS='--vocab-size 8000 --force'")


def test_an_unfinished_run_with_other_options_is_refused(tmp_path):
    out = tmp_path / "out"
    StageRun("demo", out, {"a": 1}, "fp")          # started, never finished
    with pytest.raises(StageError, match="an unfinished run"):
        StageRun("demo", out, {"a": 2}, "fp")


def test_temporaries_of_a_killed_run_are_removed(tmp_path):
    out = tmp_path / "out"
    StageRun("demo", out, {}, "fp")
    (out / ".f1.txt.abc123.tmp").write_text("half")
    StageRun("demo", out, {}, "fp")
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))


def test_shown_figures_reach_the_screen_not_the_manifest(tmp_path):
    out = tmp_path / "out"
    summary = StageRun("demo", out, {}, "fp").finish({"files": 1}, shown={"output_bytes": 5})
    assert summary == {"files": 1, "output_bytes": 5}
    assert json.loads((out / "manifest.json").read_text())["summary"] == {"files": 1}


def test_output_of_other_rules_is_redone_not_reported_done(tmp_path, caplog):
    files = make_inputs(tmp_path, n=2)
    out = tmp_path / "out"
    first = StageRun("format", out, {}, "fp", rules={"rules_version": 1})
    list(first.run_tasks(tasks_for(files, out), write_upper))
    first.finish({"files": 2}, outputs=[out / f.name for f in files])
    assert json.loads((out / "manifest.json").read_text())["rules"] == {"rules_version": 1}
    (out / "stale.txt").write_text("made by the old rules", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="pipeline"):
        second = StageRun("format", out, {}, "fp", rules={"rules_version": 2})
    assert not second.complete and not (out / "stale.txt").exists()
    assert "other rules" in caplog.text
    # the same rules: already done
    list(second.run_tasks(tasks_for(files, out), write_upper))
    second.finish({"files": 2}, outputs=[out / f.name for f in files])
    assert StageRun("format", out, {}, "fp", rules={"rules_version": 2}).complete
