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


def test_the_card_names_models_without_this_machines_paths(tmp_path):
    """Issue 60: `--evaluation DIR` wrote the absolute paths fine-tuning recorded into the card.
    Ours is "this model", another local folder its name, a Hub name as it is."""
    run = make_model_dir(tmp_path)
    ours, other = str(tmp_path / "runs" / "uk_modern" / "hf"), tmp_path / "models" / "uk_bert"
    other.mkdir(parents=True)
    suite = {**SUITE, "models": [{"label": ours, "ours": True}, {"label": str(other)},
                                 {"label": "bert-base-multilingual-cased"}],
             "rows": [{**r, "model": {"runs/hu_p1": ours}.get(r["model"], r["model"])} for r in SUITE["rows"]]
             + [{**SUITE["rows"][-1], "model": str(other), "mean": 0.7}]}
    (tmp_path / "ft").mkdir()
    (tmp_path / "ft" / "suite.json").write_text(json.dumps(suite))
    assert main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "a"),
                 "--evaluation", str(tmp_path / "ft")]) == 0
    card = (tmp_path / "a" / "README.md").read_text()
    assert str(tmp_path) not in card
    assert "| this model (ours) | random init | uk_bert | bert-base-multilingual-cased | seeds |" in card
    assert "Compared with uk_bert, bert-base-multilingual-cased" in card
    # one task's results.json, as make pretrain's probe writes it (the model's absolute path)
    probe = write_results(tmp_path / "probe", task="ner", model=ours, probe=str(tmp_path / "data" / "uk"),
                          evaluated_on="test")
    assert main(["--checkpoint_dir", str(run), "--output", str(tmp_path / "b"), "--evaluation", str(probe)]) == 0
    card = (tmp_path / "b" / "README.md").read_text()
    assert str(tmp_path) not in card
    assert "| task | dataset | metric | this model (ours) | random init | seeds |" in card
    assert "| ner (uk) | test | entity_f1 | 0.610 ± 0.012 | 0.420 ± 0.020 |" in card
