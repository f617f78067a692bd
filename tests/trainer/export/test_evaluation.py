"""The model card's Evaluation section: from a suite's suite.json or one task's results.json,
given with --evaluation or found in the run's downstream/ folder; a bad --evaluation file is
one Error line and nothing exported."""
from __future__ import annotations

import json

from tests.helpers.downstream_results import SUITE, write_results
from tests.helpers.finetune_data import make_model_dir
from trainer.export.cli import main


def test_the_card_shows_a_suite_given_or_the_runs_own_results(tmp_path, capsys):
    run = make_model_dir(tmp_path)
    (tmp_path / "ft").mkdir()
    (tmp_path / "ft" / "suite.json").write_text(json.dumps(SUITE))
    assert main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "a"),
                 "--evaluation", str(tmp_path / "ft")]) == 0
    card = (tmp_path / "a" / "README.md").read_text()
    assert "## Evaluation" in card and "Compared with bert-base-multilingual-cased" in card
    assert ("| wikiann-hu | unimelb-nlp/wikiann hu (test) | entity_f1 | 0.812 ± 0.010 | 0.403 ± 0.010 "
            "| 0.855 ± 0.020 | 1,2,3 |") in card
    # no --evaluation: the run's downstream/results.json (one task) when there is one
    write_results(run / "downstream", task="ner", model=str(run))
    assert main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "b")]) == 0
    card = (tmp_path / "b" / "README.md").read_text()
    assert "## Evaluation" in card and "| 0.610 ± 0.012 | 0.420 ± 0.020 |" in card


def test_a_bad_evaluation_file_is_one_error_line_and_nothing_exported(tmp_path, capsys):
    run = make_model_dir(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": [{"name": "x"}], "models": []}))
    assert main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "c"),
                 "--evaluation", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"Error: --evaluation {bad}: not the suite.json")
    assert not (tmp_path / "c").exists()
    assert main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "c"),
                 "--evaluation", str(tmp_path / "nowhere")]) == 1
    assert "no suite.json or results.json there" in capsys.readouterr().err
