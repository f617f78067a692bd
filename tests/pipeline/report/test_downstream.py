"""Section `downstream`: a run's probe scores after fine-tuning (results.json of the fine-tuning
CLI): a figure against pretraining step with error bars and the random-init band, a table;
a results.json that breaks the contract is a warning, never a crash."""
from __future__ import annotations

import json
import re

import pytest

from pipeline.report import figures
from pipeline.report.downstream import downstream_section
from tests.helpers.downstream_results import RESULTS, write_results

IMG = re.compile(r'<img alt="([^"]*)" src="data:image/png;base64,')


def rows(html: str) -> list[list[str]]:
    """The table's body rows as lists of cell texts."""
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", html)
            if "<td" in tr]


@pytest.fixture
def figures_drawn(monkeypatch):
    """The matplotlib figures the section draws (still turned into <img> tags)."""
    drawn = []
    real = figures.to_img

    def keep(fig, alt):
        drawn.append(fig)
        return real(fig, alt)

    monkeypatch.setattr(figures, "to_img", keep)
    return drawn


def test_checkpoints_are_a_figure_with_error_bars_and_the_random_init_band(tmp_path, figures_drawn):
    run = tmp_path / "run"
    write_results(run / "downstream")
    sec = downstream_section([run])
    html = sec.html()
    assert sec.warnings == []
    assert [alt for alt in IMG.findall(html)] == ["ner: entity_f1 after fine-tuning, against pretraining step"]
    assert rows(html) == [["200", "0.500 ± 0.010", "3"], ["400", "0.580 ± 0.015", "3"],
                          ["pretrained", "0.610 ± 0.012", "3"], ["random init", "0.420 ± 0.020", "3"]]
    assert "probe data/hu; run runs/hu_p1; seeds 1, 2, 3" in html
    # the picture: score against step (sorted) with sd error bars, random init as a line and band
    (ax,) = figures_drawn[0].axes
    (bars,) = ax.containers
    line, _caps, (verticals,) = bars
    assert list(line.get_xdata()) == [200, 400] and list(line.get_ydata()) == [0.5, 0.58]
    spans = [y for seg in verticals.get_segments() for y in seg[:, 1]]
    assert spans == pytest.approx([0.49, 0.51, 0.565, 0.595])
    flat = {round(ln.get_ydata()[0], 6): ln.get_label() for ln in ax.lines if ln is not line
            and len(set(ln.get_ydata())) == 1 and ln.get_label() in ("random init (± sd)", "pretrained (final)")}
    assert flat == {0.42: "random init (± sd)", 0.61: "pretrained (final)"}
    (band,) = ax.patches                          # axhspan: a rectangle in data y
    assert [band.get_y(), band.get_y() + band.get_height()] == pytest.approx([0.40, 0.44])
    assert ax.get_ylabel() == "entity_f1" and ax.get_xlabel() == "pretraining step"


def test_pretrained_alone_is_a_table_without_a_figure(tmp_path):
    path = write_results(tmp_path / "r.json", drop=("checkpoints", "random_init"))
    sec = downstream_section(extra=[path])
    assert sec.warnings == [] and not IMG.search(sec.html())
    assert rows(sec.html()) == [["pretrained", "0.610 ± 0.012", "3"]]


def test_qa_scores_in_percent_are_shown_as_given(tmp_path):
    path = write_results(tmp_path / "qa", task="qa", metric="exact_match", drop=("checkpoints",),
                         pretrained={"mean": 71.25, "sd": 1.5, "scores": [70, 71.25, 72.5]},
                         random_init={"mean": 12.0, "sd": 0.5, "scores": [11.5, 12.5]})
    html = downstream_section(extra=[path.parent]).html()
    assert "qa: exact_match" in html and "<th class=num>exact_match (mean ± sd)</th>" in html
    assert rows(html) == [["pretrained", "71.25 ± 1.50", "3"], ["random init", "12.00 ± 0.50", "2"]]


def test_a_pretrained_model_no_better_than_random_weights_is_red(tmp_path):
    path = write_results(tmp_path / "r.json", pretrained={"mean": 0.41, "sd": 0.01, "scores": [0.4, 0.42]})
    sec = downstream_section(extra=[path])
    assert len(sec.warnings) == 1
    assert "does not beat the same model from random weights (0.420 ± 0.020 entity_f1)" in sec.warnings[0]


@pytest.mark.parametrize("text, why", [
    ('{"task": "ner",', "not valid JSON"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({k: v for k, v in RESULTS.items() if k != "pretrained"}), "'pretrained' is missing"),
    (json.dumps({**RESULTS, "metric": 3}), "'metric' is missing or not a string"),
    (json.dumps({**RESULTS, "pretrained": {"mean": "0.6"}}), "'pretrained.mean' is missing or not a finite number"),
    (json.dumps({**RESULTS, "pretrained": {"mean": float("nan")}}),
     "'pretrained.mean' is missing or not a finite number"),
    (json.dumps({**RESULTS, "random_init": [0.4]}), "'random_init' is not an object"),
    (json.dumps({**RESULTS, "checkpoints": [{"mean": 0.5}]}), "'checkpoints[0].step' is missing"),
    (json.dumps({**RESULTS, "checkpoints": {"200": 0.5}}), "'checkpoints' is not a list"),
    (json.dumps({**RESULTS, "random_init": {"mean": 0.4, "sd": -1}}), "'random_init.sd' is not a number ≥ 0"),
    (json.dumps({**RESULTS, "random_init": {"mean": 0.4, "scores": [0.4, None]}}),
     "'random_init.scores' is not a list"),
])
def test_a_malformed_results_json_is_a_warning(tmp_path, text, why):
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    sec = downstream_section(extra=[path])
    assert len(sec.warnings) == 1
    assert sec.warnings[0].startswith(f"{path}: not a fine-tuning results.json: {why}"), sec.warnings
    html = sec.html()
    assert not IMG.search(html) and "<table" not in html


def test_bytes_that_are_not_text_and_a_good_file_beside_a_bad_one(tmp_path):
    bad = tmp_path / "bad" / "results.json"
    bad.parent.mkdir()
    bad.write_bytes(b"\xff\xfe\x00garbage")
    good = write_results(tmp_path / "good")
    sec = downstream_section(extra=[bad, good])
    assert sec.warnings == [f"{bad}: not a fine-tuning results.json: not UTF-8 text"]
    assert len(IMG.findall(sec.html())) == 1


def test_missing_results(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    sec = downstream_section([run])              # a run that was never fine-tuned: a note
    assert sec.warnings == [] and "No fine-tuning results" in sec.html()
    empty = tmp_path / "empty"
    empty.mkdir()
    sec = downstream_section([run], [empty, tmp_path / "nowhere"])    # given, but nothing there
    assert sec.warnings == [f"--downstream {empty}: no results.json there",
                            f"--downstream {tmp_path / 'nowhere'}: no results.json there"]


def test_a_folder_of_tasks_and_the_same_file_given_twice(tmp_path):
    run = tmp_path / "run"
    write_results(run / "downstream" / "ner")
    write_results(run / "downstream" / "qa", task="qa", metric="f1", drop=("checkpoints",),
                  pretrained={"mean": 55.0, "sd": 2.0, "scores": [53, 57]})
    sec = downstream_section([run], [run / "downstream", run / "downstream" / "ner" / "results.json"])
    html = sec.html()
    assert sec.warnings == []
    assert html.count("<h3>") == 2 and html.index("ner: entity_f1") < html.index("qa: f1")
