"""`pipeline clean --keep ...`: removes the pipeline's folders that are not kept, nothing else."""
from __future__ import annotations

from click.testing import CliRunner

from pipeline.cli import cli

FOLDERS = ("download", "extracted", "formatted", "sentences", "filtered", "sharded", "vocab",
           "rejected", "hdf5_lower_case_0_seq_len_128_x", "hdf5_lower_case_0_seq_len_512_x")


def make_lang_dir(root):
    lang = root / "uk"
    for name in FOLDERS:
        (lang / name / "sub").mkdir(parents=True)
        (lang / name / "sub" / "f.txt").write_text("x" * 1000)
    (lang / "report.html").write_text("<html></html>")
    (lang / "my_notes.txt").write_text("mine")
    return lang


def clean(root, *args):
    return CliRunner().invoke(cli, ["--data-dir", str(root), "--lang", "uk", "clean", *args])


def test_keeps_what_is_named_and_whatever_is_not_the_pipelines(tmp_path):
    lang = make_lang_dir(tmp_path)
    res = clean(tmp_path, "--keep", "hdf5,vocab", "--dry-run")
    assert res.exit_code == 0 and "would remove 8 items, 7.0 KB" in res.output
    assert len(list(lang.iterdir())) == len(FOLDERS) + 2
    res = clean(tmp_path, "--keep", "hdf5,vocab")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in lang.iterdir()) == [
        "hdf5_lower_case_0_seq_len_128_x", "hdf5_lower_case_0_seq_len_512_x", "my_notes.txt", "vocab"]
    # stage names and folder names both work; none removes every pipeline folder
    lang = make_lang_dir(tmp_path / "b")
    assert clean(tmp_path / "b", "--keep", "filter,sharded").exit_code == 0
    assert {"filtered", "sharded", "my_notes.txt"} == {p.name for p in lang.iterdir()}
    assert clean(tmp_path / "b", "--keep", "none").exit_code == 0
    assert [p.name for p in lang.iterdir()] == ["my_notes.txt"]


def test_bad_keep_and_missing_folder_are_one_line(tmp_path):
    make_lang_dir(tmp_path)
    res = clean(tmp_path, "--keep", "hdf5,vocabs")
    assert res.exit_code == 1 and "vocabs is not one of" in res.output and "Traceback" not in res.output
    assert clean(tmp_path, "--dry-run").exit_code == 2          # --keep is required: explicit
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "vi", "clean", "--keep", "hdf5"])
    assert res.exit_code == 1 and "nothing to clean" in res.output


def test_the_probe_that_finetune_reads_is_kept_by_every_list_but_none(tmp_path):
    """Issue 38: `clean --keep hdf5,vocab` removed probe/, which `finetune --probe` needs."""
    lang = make_lang_dir(tmp_path)
    (lang / "probe").mkdir()
    (lang / "probe" / "train.conll").write_text("a\tO\n")
    res = clean(tmp_path, "--keep", "hdf5,vocab")
    assert res.exit_code == 0 and "probe" in res.output
    assert (lang / "probe" / "train.conll").is_file() and not (lang / "sharded").exists()
    assert clean(tmp_path, "--keep", "probe").exit_code == 0          # naming it is fine too
    assert (lang / "probe").is_dir() and not (lang / "vocab").exists()
    assert clean(tmp_path, "--keep", "none").exit_code == 0
    assert not (lang / "probe").exists()
