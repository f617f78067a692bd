"""The report's downstream section shows a benchmark suite's suite.json as one table (a task a
row, a model a column), warns where ours does not beat its random init, and warns (never
crashes) on a file that is not one."""
from __future__ import annotations

import json

from pipeline.report.downstream import downstream_section
from tests.helpers.downstream_results import SUITE


def test_a_suite_folder_is_shown_as_its_table(tmp_path):
    (tmp_path / "ft").mkdir()
    (tmp_path / "ft" / "suite.json").write_text(json.dumps(SUITE))
    sec = downstream_section([], [tmp_path / "ft"])
    html = "".join(sec.parts)
    assert "Suite hu" in html and "wikiann-hu" in html and "unimelb-nlp/wikiann hu" in html
    for cell in ("runs/hu_p1 (ours)", "random init", "bert-base-multilingual-cased", "0.812 ± 0.010",
                 "0.403 ± 0.010", "0.855 ± 0.020"):
        assert cell in html
    assert html.index("0.812") < html.index("0.403") < html.index("0.855")
    assert sec.warnings == []


def test_ours_below_random_init_is_a_warning_and_a_broken_file_too(tmp_path):
    worse = json.loads(json.dumps(SUITE))
    worse["rows"][0]["mean"] = 0.1
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "suite.json").write_text(json.dumps(worse))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "suite.json").write_text(json.dumps({"rows": [{"name": "x"}], "models": []}))
    sec = downstream_section([], [tmp_path / "a", tmp_path / "b"])
    assert any("does not beat the same model from random weights" in w for w in sec.warnings)
    assert any("b/suite.json: not a fine-tuning suite.json: rows[0] lacks" in w for w in sec.warnings)


def test_a_model_that_is_no_object_is_a_warning(tmp_path):
    broken = json.loads(json.dumps(SUITE))
    broken["models"][1] = "bert-base-multilingual-cased"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "suite.json").write_text(json.dumps(broken))
    sec = downstream_section([], [tmp_path / "c"])
    assert sec.warnings == [f"{tmp_path / 'c' / 'suite.json'}: not a fine-tuning suite.json: "
                            "models[1] is not an object with a 'label'"]
