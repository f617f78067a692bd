"""`pipeline inspect FILE.hdf5`: decoded instances and statistics of an encoded shard."""
from __future__ import annotations

import json
import re
from pathlib import Path

import h5py
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages.encode import encode
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_shards, write_vocab


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    docs = make_documents(200, seed=2)
    write_shards(root / "xx" / "sharded", docs, n_train=1, n_test=1)
    vocab = write_vocab(root / "xx" / "vocab", vocab_tokens(documents_text(docs)), lower_case=False)
    (vocab / "manifest.json").write_text(json.dumps({"stage": "vocab"}), encoding="utf-8")
    summary = encode(data_dir=root, lang="xx", workers=1)
    return root, Path(summary["output"]) / "xxwiki_training_0.hdf5"


def test_shows_instances_and_statistics(encoded):
    root, file = encoded
    r = CliRunner().invoke(cli, ["--data-dir", str(root), "--lang", "xx", "inspect", str(file), "--show", "2"])
    assert r.exit_code == 0, r.output
    out = r.output
    assert out.count("\n#") == 2 and "  A: [CLS]" in out and "[SEP]" in out
    assert "[MASK→" in out and ("random next (1)" in out or "actual next (0)" in out)
    masked = float(re.search(r"= ([\d.]+)% of", out).group(1))
    assert 14 < masked < 17
    mask_share = float(re.search(r"\[MASK\] ([\d.]+)%", out).group(1))
    assert 70 < mask_share < 90
    assert "random next (B)" in out and "mean length" in out and "all valid" in out
    with h5py.File(file, "r") as f:
        n = f["input_ids"].shape[0]
    assert f"{n:,} instances" in out


def test_vocab_found_from_the_manifest_or_given(encoded, tmp_path):
    root, file = encoded
    # no --data-dir: the encode manifest names the vocab
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "inspect", str(file), "--show", "0"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["inspect", str(file), "--show", "1", "--vocab",
                                 str(root / "xx" / "vocab" / "vocab.txt")])
    assert r.exit_code == 0 and "[CLS]" in r.output


def test_bad_files_give_one_clear_line(tmp_path):
    not_h5 = tmp_path / "x.hdf5"
    not_h5.write_text("hello")
    for path in (not_h5, tmp_path / "missing.hdf5"):
        r = CliRunner().invoke(cli, ["inspect", str(path)])
        assert r.exit_code == 1 and r.output.startswith("Error") and "Traceback" not in r.output
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as f:
        f["something"] = [1, 2, 3]
    r = CliRunner().invoke(cli, ["inspect", str(other)])
    assert r.exit_code == 1 and "lacks input_ids" in r.output
