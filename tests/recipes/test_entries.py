"""The recipes' entries: `python -m recipes.X`, the thin files in scripts/ and the console scripts
that pyproject.toml declares all reach the same main, and scripts/ holds no product logic."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = ("pretrain", "demo", "fill_mask", "heldout_mlm")


def help_text(*cmd: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    res = subprocess.run([sys.executable, *cmd, "--help"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("name", ENTRIES)
def test_the_thin_entry_and_the_module_say_the_same(name):
    def as_one(text: str) -> str:   # a usage line names the command as it was started
        return text.replace(f"python scripts/{name}.py", "PROG").replace(f"python -m recipes.{name}", "PROG")

    module = help_text("-m", f"recipes.{name}")
    assert module.startswith("usage: ")
    assert as_one(help_text(f"scripts/{name}.py")) == as_one(module)


@pytest.mark.parametrize("name", ENTRIES)
def test_a_thin_entry_only_hands_over_to_the_package(name):
    tree = ast.parse((ROOT / "scripts" / f"{name}.py").read_text(encoding="utf-8"))
    assert ast.get_docstring(tree) and "Usage:" in ast.get_docstring(tree)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [getattr(n, "module", None) for n in imports] == [None, f"recipes.{name}"]
    assert not [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign))]


def test_the_console_scripts_name_the_entries():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["wiki2bert-pretrain"] == "recipes.pretrain:main"
    assert project["project"]["scripts"]["wiki2bert-demo"] == "recipes.demo:main"
    assert "recipes*" in project["tool"]["setuptools"]["packages"]["find"]["include"]
