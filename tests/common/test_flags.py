"""A misspelled flag is answered with the flag meant (common/flags.py), in the trainer and in
the scripts alike."""
from __future__ import annotations

import argparse

import pytest

from common.flags import HintingParser, close_flag


def test_close_flag_names_the_flag_meant():
    p = argparse.ArgumentParser()
    p.add_argument("--budget")
    p.add_argument("--batch-size")
    assert close_flag(p, "unrecognized arguments: --bugdet 10m") == "; did you mean --budget?"
    assert close_flag(p, "unrecognized arguments: --bugdet=10m") == "; did you mean --budget?"
    assert close_flag(p, "unrecognized arguments: --zzz") == ""
    assert close_flag(p, "argument --budget: expected one argument") == ""


def test_the_hinting_parser_is_one_line_with_exit_status_2(capsys):
    p = HintingParser(prog="python scripts/pretrain.py")
    p.add_argument("--budget")
    with pytest.raises(SystemExit) as end:
        p.parse_args(["--bugdet", "10m"])
    assert end.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "Error: unrecognized arguments: --bugdet 10m; did you mean --budget? (see python "
        "scripts/pretrain.py --help)"]


def test_a_choice_close_to_one_of_the_flags_is_named():
    """Issue 60: `--task nerr`, `--baseline random` got the list, not the one meant."""
    p = argparse.ArgumentParser()
    assert close_flag(p, "argument --task: invalid choice: 'nerr' (choose from 'ner', 'pos', 'qa')") == \
        "; did you mean --task ner?"
    assert close_flag(p, "argument --baseline: invalid choice: 'random' (choose from 'random-init')") == \
        "; did you mean --baseline random-init?"
    assert close_flag(p, "argument --task: invalid choice: 'zzz' (choose from 'ner', 'pos')") == ""


@pytest.mark.parametrize("argv0, said", [
    ("/repo/recipes/pretrain.py", "python -m recipes.pretrain"),        # python -m, and make's
    ("scripts/pretrain.py", "python scripts/pretrain.py"),
    ("/venv/bin/wiki2bert-pretrain", "wiki2bert-pretrain"),
])
def test_a_command_is_named_as_it_was_started(monkeypatch, argv0, said):
    """Issue 60: `make pretrain`'s mistakes said `python scripts/pretrain.py`."""
    from common.flags import started_as

    monkeypatch.setattr("sys.argv", [argv0, "--lang", "hu"])
    assert started_as("recipes.pretrain", "wiki2bert-pretrain") == said
