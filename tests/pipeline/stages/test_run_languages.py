"""`pipeline --lang hu,hy run`: two small languages in two scripts (the shipped Hungarian sample and
an Armenian dump built here), each through its own stages in its own folder, one joint vocab that
every language's encode uses, the same bytes for --workers 1 and 2; bad input is one Error line."""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages.run import _one_dump
from tests.helpers.wiki_dump import HY, write_bz2_dump, write_prose_dump

HDF5 = "hdf5_lower_case_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_1_joint-hu+hy"


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("Error:")]


@pytest.fixture(scope="module")
def hy_dump(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dumps") / "hywiki.xml.bz2"
    write_prose_dump(path, "hy", HY, n_pages=30)
    return path


def multi_run(data: Path, workers: int, sample_dump: Path, hy_dump: Path, *extra: str):
    return CliRunner().invoke(cli, [
        "--data-dir", str(data), "--lang", "hu,hy", "--workers", str(workers), "run",
        "--dump", f"hu={sample_dump}", "--dump", f"hy={hy_dump}", "--vocab-size", "700",
        "--own-vocab-size", "500", "--encode", "128/20", "--dupe-factor", "1", *extra])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_dump, hy_dump) -> tuple[Path, Path]:
    out = []
    for workers in (1, 2):
        data = tmp_path_factory.mktemp(f"w{workers}") / "data"
        res = multi_run(data, workers, sample_dump, hy_dump)
        assert res.exit_code == 0, res.output
        out.append(data)
    return out[0], out[1]


@pytest.mark.slow
def test_each_language_in_its_own_folder_one_joint_vocab_for_both(runs):
    data = runs[0]
    joint = data / "multi" / "hu+hy" / "vocab"
    assert len((joint / "vocab.txt").read_text(encoding="utf-8").splitlines()) == 700
    fingerprints = set()
    for lang in ("hu", "hy"):
        root = data / lang
        for folder in ("download", "extracted", "formatted", "sentences", "filtered", "sharded",
                       "vocab", "probe"):
            assert (root / folder / "manifest.json").is_file(), (lang, folder)
        # its own vocab, the comparison's baseline, at --own-vocab-size
        assert len((root / "vocab" / "vocab.txt").read_text(encoding="utf-8").splitlines()) == 500
        # its own splitter: quntoken for hu, the rules for hy
        split = json.loads((root / "sentences" / "manifest.json").read_text())
        assert split["summary"]["splitter"] == ("quntoken" if lang == "hu" else "rules")
        m = json.loads((root / HDF5 / "manifest.json").read_text())
        assert m["joint_vocab"]["languages"] == ["hu", "hy"] and m["joint_vocab"]["sampling_alpha"] == 0.3
        assert Path(m["vocab"]) == (joint / "vocab.txt").resolve()
        fingerprints.add(m["tokenizer"]["fingerprint"])
        files = sorted((root / HDF5 / f"{lang}wiki").glob("*_training_*.hdf5"))
        assert files
        with h5py.File(files[0]) as f:
            assert f["input_ids"].shape[1] == 128
            assert int(f["input_ids"][:].max()) < 700
        assert "B-LINK" in (root / "probe" / "train.conll").read_text(encoding="utf-8")
        page = (root / "report.html").read_text(encoding="utf-8")
        assert 'id="joint-vocab"' in page and f"{lang} (this page)" in page
    assert len(fingerprints) == 1     # the trainer's test that the folders share one vocab
    rep = json.loads((joint / "joint_report.json").read_text(encoding="utf-8"))
    assert set(rep["languages"]) == {"hu", "hy"}
    assert all(f["own"]["vocab_size"] == 500 for f in rep["languages"].values())


def test_the_same_bytes_for_one_and_two_workers(runs):
    def files(data: Path) -> dict[str, bytes]:
        return {str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*"))
                if p.is_file() and p.suffix in (".txt", ".hdf5", ".model", ".conll", ".json")
                and p.name not in ("manifest.json", "joint_report.json", "vocab_report.json")}

    one, two = files(runs[0]), files(runs[1])
    assert one.keys() == two.keys() and len(one) > 50
    assert [k for k in one if one[k] != two[k]] == []


@pytest.mark.slow
def test_a_rerun_skips_every_stage(runs, sample_dump, hy_dump):
    res = multi_run(runs[0], 1, sample_dump, hy_dump)
    assert res.exit_code == 0, res.output
    assert "joint-vocab: already done" in res.output and "encode: already done" in res.output


def test_a_language_whose_corpus_comes_out_empty_is_named_with_its_stage(tmp_path, sample_dump):
    stubs = tmp_path / "hywiki.xml.bz2"     # one-sentence stubs: the filter keeps none
    write_bz2_dump(stubs, "hy", [(f"P{i}", f"Երևանը Հայաստանի մայրաքաղաքն է {i}։") for i in range(10)])
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "--lang", "hy,hu", "--workers", "1",
                                   "run", "--dump", f"hy={stubs}", "--dump", f"hu={sample_dump}"])
    assert res.exit_code == 1
    assert error_lines(res.output) == [error_lines(res.output)[0]]
    line = error_lines(res.output)[0]
    assert line.startswith("Error: hy: its corpus is empty after filter") and "too_few_sentences 10" in line
    assert not (tmp_path / "d" / "hu").exists()   # stopped before the next language


@pytest.mark.parametrize("args, expected", [
    (["--lang", "hu,hyy", "run"], "hyy is not the code of a Wikipedia (did you mean hy?)"),
    (["--lang", "hu,hy,hu", "run"], "hu given twice"),
    (["--lang", "hu,hy", "run", "--dump", "hu=a.xml", "--dump", "hy=b.xml", "--dump", "de=c.xml"],
     "de is not one of --lang hu,hy"),
    (["--lang", "hu,hy", "run", "--dump", "hu=a.xml"], "no dump for hy"),
    (["--lang", "hu,hy", "run", "--dump", "a.xml"], "give each dump as LANG=PATH"),
    (["--lang", "hu,hy", "run", "--dump", "hu=a.xml", "--dump", "hu=b.xml"], "hu has two dumps"),
    (["--lang", "hu,hy", "run", "--source", "web=x.txt"], "--source with several languages"),
    (["--lang", "hu,hy", "run", "--weight", "wikipedia=2"], "--weight with several languages"),
    (["--lang", "hu,hy", "probe"], "`pipeline probe` works on one language"),
    (["--lang", "hu", "run", "--sampling-alpha", "0.5"], "--sampling-alpha is for several languages"),
    (["--lang", "hu,", "run"], "an empty code"),
])
def test_bad_input_is_one_error_line_and_writes_nothing(tmp_path, args, expected):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), *args])
    assert res.exit_code == 2, res.output
    assert len(error_lines(res.output)) == 1 and expected in res.output, res.output
    assert "Traceback" not in res.output and not (tmp_path / "d").exists()


def test_one_language_takes_its_dump_as_before(tmp_path):
    assert _one_dump((), "hu") is None
    assert _one_dump(("x.xml",), "hu") == "x.xml"
    assert _one_dump(("a.xml", "b.xml"), "hu") == "b.xml"        # the last one, as click did
    assert _one_dump(("hu=x.xml",), "hu") == "x.xml"
    odd = tmp_path / "hu=x.xml"                                   # a file really named so
    odd.write_text("")
    assert _one_dump((str(odd),), "hu") == str(odd)
