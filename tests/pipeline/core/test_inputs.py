"""Where a stage reads and writes: --input/--output, else the registry's folders."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core.errors import StageError
from pipeline.core.inputs import flat_name, resolve_input, text_io


def test_flat_names_keep_the_input_name():
    root = Path("/x/extracted")
    assert flat_name(root, root / "AA" / "wiki_00") == "AA_wiki_00.txt"
    assert flat_name(root, root / "AA" / "wiki_00.jsonl", strip_suffixes=(".jsonl",)) == "AA_wiki_00.txt"
    assert flat_name(root, Path("/elsewhere/b.txt")) == "b.txt"


def test_the_upstream_folder_must_be_finished(tmp_path):
    with pytest.raises(StageError, match="run `pipeline format` first"):
        resolve_input(tmp_path, "hu", "split", None)
    (tmp_path / "hu" / "formatted").mkdir(parents=True)
    with pytest.raises(StageError, match="no finished 'format' output"):
        resolve_input(tmp_path, "hu", "split", None)
    (tmp_path / "hu" / "formatted" / "manifest.json").write_text(json.dumps({"stage": "format"}))
    assert resolve_input(tmp_path, "hu", "split", None) == tmp_path / "hu" / "formatted"


def test_text_io_pairs_inputs_with_outputs_and_refuses_clashes(tmp_path):
    src = tmp_path / "in"
    (src / "AA").mkdir(parents=True)
    (src / "AA" / "wiki_00.txt").write_text("x\n")
    (src / "AA_wiki_00.txt").write_text("y\n")
    io = text_io(tmp_path, "hu", "split", src, tmp_path / "out")
    with pytest.raises(StageError, match="same output name"):
        io.tasks_out()
    with pytest.raises(StageError, match="is the input folder"):
        text_io(tmp_path, "hu", "split", src, src)
