"""`pipeline encode`: NVIDIA's HDF5 layout and names, determinism whatever --workers, the stage
contract (resume, refusal, --force) and one clear line for each kind of bad input."""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages.encode import encode, shard_seed
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_shards, write_vocab

FOLDER = "hdf5_lower_case_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5"
KEYS = {"input_ids": (np.int32, 128), "input_mask": (np.int8, 128), "segment_ids": (np.int8, 128),
        "masked_lm_positions": (np.int32, 20), "masked_lm_ids": (np.int32, 20),
        "next_sentence_labels": (np.int8, None)}


@pytest.fixture(scope="module")
def docs():
    return make_documents(120, seed=7)


@pytest.fixture()
def data_dir(tmp_path, docs):
    """DATA_DIR with xx/sharded (3 shards + manifest) and xx/vocab (vocab.txt + config + manifest)."""
    root = tmp_path / "data"
    write_shards(root / "xx" / "sharded", docs)
    vocab = write_vocab(root / "xx" / "vocab", vocab_tokens(documents_text(docs)), lower_case=False)
    (vocab / "manifest.json").write_text(json.dumps({"stage": "vocab"}), encoding="utf-8")
    return root


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result


def files_of(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.rglob("*.hdf5"))}


def test_writes_nvidia_layout_under_the_data_dir(data_dir):
    r = run("--data-dir", data_dir, "--lang", "xx", "--workers", "1", "encode")
    assert r.exit_code == 0, r.output
    out = data_dir / "xx" / FOLDER / "xxwiki"
    names = sorted(p.name for p in out.iterdir())
    assert names == ["xxwiki_test_0.hdf5", "xxwiki_training_0.hdf5", "xxwiki_training_1.hdf5"]
    assert (data_dir / "xx" / FOLDER / "manifest.json").is_file()
    for name in names:
        with h5py.File(out / name, "r") as f:
            assert set(f.keys()) == set(KEYS)
            assert not f.attrs.keys()   # sentence pairs: no `packed` attribute, nor any other
            n = f["next_sentence_labels"].shape[0]
            assert n > 50
            for key, (dtype, width) in KEYS.items():
                ds = f[key]
                assert ds.dtype == dtype, key
                assert ds.shape == ((n,) if width is None else (n, width)), key
                assert ds.compression == "gzip", key
            # NVIDIA's loader: predictions end at the first 0 in masked_lm_positions
            pos = f["masked_lm_positions"][:]
            ids = f["masked_lm_ids"][:]
            first_zero = np.where((pos == 0).any(axis=1), (pos == 0).argmax(axis=1), pos.shape[1])
            assert ((pos > 0).sum(axis=1) == first_zero).all()
            assert (ids[pos == 0] == 0).all() and (ids[pos > 0] > 0).all()
            # ... so the labels its __getitem__ builds (masked_lm_labels[positions[:index]] =
            # ids[:index]) cover every [MASK] of input_ids (103 in this layout)
            labelled = np.zeros((n, 128), dtype=bool)
            for row in range(n):
                labelled[row, pos[row, :first_zero[row]]] = True
            assert not ((f["input_ids"][:] == 103) & ~labelled).any()
            assert labelled.sum() == (pos > 0).sum()
            assert f["input_ids"][:, 0].tolist() == [101] * n   # [CLS] of this vocab layout


def test_same_bytes_for_one_or_two_workers_and_rerun_rewrites_nothing(data_dir, tmp_path):
    args = ["--data-dir", data_dir, "--lang", "xx"]
    assert run(*args, "--workers", "1", "encode", "--output", tmp_path / "w1").exit_code == 0
    r = run(*args, "--workers", "2", "encode", "--output", tmp_path / "w2")
    assert r.exit_code == 0, r.output
    one, two = files_of(tmp_path / "w1"), files_of(tmp_path / "w2")
    assert one == two and len(one) == 3
    manifest = tmp_path / "w2" / FOLDER / "manifest.json"
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "w2").rglob("*") if p.is_file()}
    r = run(*args, "--workers", "2", "encode", "--output", tmp_path / "w2")
    assert r.exit_code == 0 and "already done" in r.output
    assert before == {p: p.stat().st_mtime_ns for p in (tmp_path / "w2").rglob("*") if p.is_file()}
    assert json.loads(manifest.read_text())["summary"]["instances"] > 0


def test_changed_inputs_are_refused_unless_force(data_dir, tmp_path):
    out = tmp_path / "out"
    args = ["--data-dir", data_dir, "--lang", "xx", "encode", "--output", out]
    assert run(*args).exit_code == 0
    vocab_txt = data_dir / "xx" / "vocab" / "vocab.txt"
    vocab_txt.write_text(vocab_txt.read_text(encoding="utf-8") + "extra\n", encoding="utf-8")
    line = _error(*args)
    assert "--force" in line and "input changed" in line
    r = run(*args, "--force")
    assert r.exit_code == 0, r.output
    assert "already done" not in r.output


def test_partial_run_skips_finished_shards(data_dir, tmp_path, monkeypatch):
    import pipeline.stages.encode as enc

    out = tmp_path / "out"
    real = enc.encode_shard
    calls = []

    def failing(shard, *a, **k):
        calls.append(shard.name)
        if shard.name == "xxwiki_training_1.txt":
            raise RuntimeError("killed")
        return real(shard, *a, **k)

    monkeypatch.setattr(enc, "encode_shard", failing)
    with pytest.raises(RuntimeError):
        encode(data_dir=data_dir, lang="xx", workers=1, output=out)
    assert not (out / FOLDER / "manifest.json").exists()
    assert not (out / FOLDER / "xxwiki" / "xxwiki_training_1.hdf5").exists()   # never half-written
    calls.clear()
    monkeypatch.setattr(enc, "encode_shard", lambda shard, *a, **k: calls.append(shard.name) or real(shard, *a, **k))
    encode(data_dir=data_dir, lang="xx", workers=1, output=out)
    assert calls == ["xxwiki_training_1.txt"]     # the shards done before are skipped
    assert (out / FOLDER / "manifest.json").is_file()


def test_case_setting_follows_the_vocab_and_options_change_the_folder(data_dir, docs, tmp_path):
    vocab = write_vocab(tmp_path / "lower", vocab_tokens(documents_text(docs), lower_case=True),
                        lower_case=True)
    s = encode(data_dir=data_dir, lang="xx", workers=1, vocab=vocab, output=tmp_path / "o",
               max_seq=64, max_pred=10, dupe_factor=1, whole_word_masking=True)
    assert Path(s["output"]).parent.name == (
        "hdf5_lower_case_1_seq_len_64_max_pred_10_masked_lm_prob_0.15_random_seed_12345_dupe_factor_1_wwm")
    with h5py.File(Path(s["output"]) / "xxwiki_training_0.hdf5", "r") as f:
        assert f["input_ids"].shape[1] == 64 and f["masked_lm_positions"].shape[1] == 10


def test_seed_depends_on_the_shard_name_not_the_order():
    assert shard_seed(12345, "xxwiki_training_0") == shard_seed(12345, "xxwiki_training_0")
    assert shard_seed(12345, "xxwiki_training_0") != shard_seed(12345, "xxwiki_training_1")
    assert shard_seed(1, "xxwiki_training_0") != shard_seed(2, "xxwiki_training_0")


def _error(*args) -> str:
    r = run(*args)
    assert r.exit_code != 0
    assert "Traceback" not in r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("Error"), r.output
    return lines[-1]


def test_bad_input_gives_one_clear_line(data_dir, tmp_path):
    base = ["--data-dir", data_dir, "--lang", "xx", "encode", "--output", tmp_path / "o"]
    vocab = data_dir / "xx" / "vocab"
    tokens = (vocab / "vocab.txt").read_text(encoding="utf-8").splitlines()

    assert "does not exist" in _error("--data-dir", tmp_path / "nowhere", "--lang", "xx", "encode")
    missing = _error(*base, "--vocab", tmp_path / "missing")
    assert "missing does not exist" in missing and "pipeline vocab" in missing
    no_mask = write_vocab(tmp_path / "v1", [t for t in tokens if t != "[MASK]"])
    assert "[MASK]" in _error(*base, "--vocab", no_mask)
    pad_moved = write_vocab(tmp_path / "v2", tokens[1:] + ["[PAD]"])
    assert "[PAD] must be id 0" in _error(*base, "--vocab", pad_moved)
    assert "--max-pred 200" in _error(*base, "--max-pred", "200")
    assert "--max-pred 126" in _error(*base, "--max-pred", "126")
    empty = tmp_path / "empty_shards"
    empty.mkdir()
    assert "holds no shards" in _error(*base, "--input", empty)
    (empty / "xxwiki_training_0.txt").write_text("", encoding="utf-8")
    assert "is empty" in _error(*base, "--input", empty)
    (empty / "xxwiki_training_0.txt").write_text("\n\n   \n\n", encoding="utf-8")
    assert "no sentences" in _error(*base, "--input", empty)
    unfinished = tmp_path / "d2"
    (unfinished / "xx" / "sharded").mkdir(parents=True)
    assert "pipeline shard" in _error("--data-dir", unfinished, "--lang", "xx", "encode")


def test_bare_vocab_file_is_cased_and_tokens_keep_accents(data_dir, docs, tmp_path):
    bare = tmp_path / "bare"
    write_vocab(bare, vocab_tokens(documents_text(docs)), lower_case=None)
    s = encode(data_dir=data_dir, lang="xx", workers=1, vocab=bare / "vocab.txt", output=tmp_path / "o",
               dupe_factor=1)
    assert "lower_case_0" in Path(s["output"]).parent.name
    tokens = (bare / "vocab.txt").read_text(encoding="utf-8").splitlines()
    with h5py.File(Path(s["output"]) / "xxwiki_training_0.hdf5", "r") as f:
        seen = {tokens[i] for i in np.unique(f["input_ids"][:]).tolist()}
    assert any(any(c in t for c in "őűáé") for t in seen)
    assert any(t[:1].isupper() for t in seen)


def test_a_shard_encodes_the_same_alone_or_with_others(data_dir, tmp_path):
    """Instances depend on the seed and the shard's name only, not on the other shards."""
    full = encode(data_dir=data_dir, lang="xx", workers=1, output=tmp_path / "all", dupe_factor=2)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "xxwiki_test_0.txt").write_bytes((data_dir / "xx" / "sharded" / "xxwiki_test_0.txt").read_bytes())
    one = encode(data_dir=data_dir, lang="xx", workers=1, input=alone, output=tmp_path / "one", dupe_factor=2)
    name = "xxwiki_test_0.hdf5"
    assert (Path(full["output"]) / name).read_bytes() == (Path(one["output"]) / name).read_bytes()
