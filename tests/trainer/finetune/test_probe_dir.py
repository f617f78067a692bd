"""`--probe` finds the probe files, or says which `pipeline ... probe` command writes them,
with the language taken from the folder layout (issue 38: `--probe data/xx/vocab` suggested
`--lang vocab`)."""
from __future__ import annotations

import pytest

from trainer.finetune.probe_dir import ProbeMissing, probe_files


def lang_dir(root, lang="xx", probe=False):
    folder = root / "data" / lang
    (folder / "vocab").mkdir(parents=True)
    (folder / "vocab" / "vocab.txt").write_text("[PAD]\n")
    (folder / "hdf5_lower_case_0_seq_len_128_max_pred_20" / f"{lang}wiki").mkdir(parents=True)
    if probe:
        (folder / "probe").mkdir()
        for name in ("train", "dev", "test"):
            (folder / "probe" / f"{name}.conll").write_text("a\tO\n")
    return folder


def message(path) -> str:
    with pytest.raises(ProbeMissing) as exc:
        probe_files(path)
    return str(exc.value)


def test_a_pipeline_subfolder_names_its_language_not_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lang_dir(tmp_path)
    for given in ("data/xx/vocab", "data/xx/hdf5_lower_case_0_seq_len_128_max_pred_20/xxwiki"):
        text = message(given)
        assert "`pipeline --data-dir data --lang xx probe`" in text, text
        assert "--probe takes DATA_DIR/LANG (data/xx)" in text
        assert "--lang vocab" not in text and "--lang xxwiki" not in text


def test_the_language_folder_itself_and_a_missing_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lang_dir(tmp_path)
    text = message("data/xx")
    assert "`pipeline --data-dir data --lang xx probe`" in text and "takes DATA_DIR/LANG (" not in text
    assert "`pipeline --data-dir data --lang uk probe`" in message("data/uk")   # nothing there yet
    assert "e.g. data/hu" in message("not a language folder")


def test_the_probe_is_found_from_the_language_folder_or_the_probe_folder(tmp_path):
    folder = lang_dir(tmp_path, probe=True)
    for given in (folder, folder / "probe"):
        files = probe_files(given)
        assert files["validation"] == folder / "probe" / "dev.conll"
        assert all(f.is_file() for f in files.values())
