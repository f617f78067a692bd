"""`make pretrain`'s --lang check names only what the command takes (issue 60): a language's
name is answered with the code to give, a code off the list with --allow-unknown-lang, which
the command accepts and passes to `pipeline download`. Make's own view: tests/test_makefile.py."""
from __future__ import annotations

import re

import pytest

from recipes.pretrain import main
from tests.helpers.pretrain_cli import pretrain


def flags_taken() -> set[str]:
    """The flags `python -m recipes.pretrain --help` lists."""
    return set(re.findall(r"--[a-z][a-z-]+", pretrain("--help").stdout))


@pytest.mark.parametrize("lang", ["Hungarian", "hungarian", "Magyar"])
def test_a_languages_name_is_answered_with_its_code(tmp_path, lang):
    res = pretrain("--lang", lang, "--data-dir", tmp_path, "--dry-run")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1, res.stderr
    assert "looks like the language's name" in lines[0] and "hu for hu.wikipedia.org" in lines[0]
    assert "--allow-unknown-lang" not in lines[0]   # it would label the corpus with the name


def test_a_code_off_the_list_names_a_flag_the_command_takes(tmp_path):
    res = pretrain("--lang", "xq", "--data-dir", tmp_path, "--runs", tmp_path / "runs", "--dry-run")
    line = res.stderr.strip()
    assert res.returncode == 1 and "\n" not in line and "--allow-unknown-lang" in line
    assert set(re.findall(r"--[a-z][a-z-]+", line)) <= flags_taken()   # before: unrecognized arguments
    ok = pretrain("--lang", "xq", "--allow-unknown-lang", "--data-dir", tmp_path, "--runs", tmp_path / "runs",
                  "--dry-run")
    assert ok.returncode == 0, ok.stderr
    download = next(x for x in ok.stdout.splitlines() if x.startswith("$ ") and " download" in x)
    assert download.endswith("--lang xq download --allow-unknown-lang")


def test_a_dump_of_another_wiki_is_still_named_with_its_code(sample_dump, tmp_path, capsys):
    assert main(["--lang", "xq", "--dump", sample_dump, "--data-dir", tmp_path, "--dry-run"]) == 1
    assert capsys.readouterr().err.strip().endswith("not xqwiki: use --lang hu")
    # with the flag the user says the dump is the wiki they mean: its download takes it as xq
    assert main(["--lang", "xq", "--dump", sample_dump, "--allow-unknown-lang", "--data-dir", tmp_path,
                 "--runs", tmp_path / "runs", "--dry-run"]) == 0
    assert f"download --dump {sample_dump} --allow-unknown-lang" in capsys.readouterr().out
