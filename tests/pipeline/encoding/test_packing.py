"""encode --pack: every sentence of every document exactly once per pass, in order; full rows
but a shard's last; the HDF5 contract's keys; `_packed` folder; inspect shows the real-token share."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.encoding.hdf5_format import PACKED_ATTR, check_file, is_packed
from pipeline.encoding.instances import Corpus
from pipeline.encoding.masking import Masker
from pipeline.encoding.packing import pack_batch, plan_packed
from pipeline.report.hdf5 import hdf5_section
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_shards, write_vocab
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.kinds import load_vocab

L, P = 32, 12


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    text = documents_text(make_documents(60, seed=3))
    spec = load_vocab(write_vocab(tmp_path_factory.mktemp("v"), vocab_tokens(text), lower_case=False))
    return spec, Corpus.from_text(text, FastWordPiece(spec))


def unmask(arrays):
    ids = arrays["input_ids"].copy()
    pos, orig = arrays["masked_lm_positions"], arrays["masked_lm_ids"]
    real = pos > 0
    np.put_along_axis(ids, pos, np.where(real, orig, np.take_along_axis(ids, pos, 1)), axis=1)
    return ids


@pytest.mark.parametrize("whole_word", [False, True])
def test_rows_hold_every_sentence_once_per_pass_in_order(setup, whole_word):
    spec, corpus = setup
    dupe = 2
    plan = plan_packed(corpus, max_seq=L, dupe_factor=dupe, seed=9)
    masker = Masker(spec, L, P, 0.3, whole_word=whole_word)
    rng = np.random.default_rng(1)
    parts = [pack_batch(corpus, plan, rows, masker, rng) for rows in plan.batches(50)]
    a = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    ids, mask = unmask(a), a["input_mask"].astype(bool)
    assert (ids[:, 0] == spec.cls_id).all() and (a["segment_ids"] == 0).all()
    assert (a["next_sentence_labels"] == 0).all()
    assert mask[:-1].all() and mask[-1].sum() >= 2           # padding only in the last row
    stream = ids[:, 1:][mask[:, 1:]]                          # rows one after the other
    docs = np.split(stream, np.flatnonzero(stream == spec.sep_id) + 1)[:-1]
    assert docs and all(d[-1] == spec.sep_id for d in docs)
    sb, db = corpus.sent_bounds, corpus.doc_bounds
    originals = {tuple(corpus.tokens[sb[db[d]]:sb[db[d + 1]]]) + (spec.sep_id,)
                 for d in range(corpus.n_docs)}
    assert len(docs) == dupe * corpus.n_docs
    for p in range(dupe):   # each pass: every document once, with its sentences in order
        got = [tuple(d) for d in docs[p * corpus.n_docs:(p + 1) * corpus.n_docs]]
        assert set(got) == originals and len(set(got)) == corpus.n_docs
    assert [tuple(d) for d in docs[:corpus.n_docs]] != [tuple(d) for d in docs[corpus.n_docs:]]
    # static masks: ascending, on no special token, about 30% of a full row's tokens
    pos = a["masked_lm_positions"]
    n = (pos > 0).sum(1)
    assert (n[:-1] == np.minimum(P, np.rint(0.3 * (L - 1 - (ids[:-1] == spec.sep_id).sum(1))))).all() \
        or whole_word
    assert not np.isin(a["masked_lm_ids"][pos > 0], [spec.cls_id, spec.sep_id, 0]).any()


def test_encode_pack_writes_a_packed_folder_and_inspect_shows_real_tokens(tmp_path):
    docs = make_documents(80, seed=5)
    root = tmp_path / "data"
    write_shards(root / "xx" / "sharded", docs)
    write_vocab(root / "xx" / "vocab", vocab_tokens(documents_text(docs)), lower_case=False)
    (root / "xx" / "vocab" / "manifest.json").write_text(json.dumps({"stage": "vocab"}))
    r = CliRunner().invoke(cli, ["--data-dir", str(root), "--lang", "xx", "encode", "--pack",
                                 "--max-seq", "64", "--max-pred", "20", "--masked-lm-prob", "0.3",
                                 "--dupe-factor", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    folder = root / "xx" / ("hdf5_lower_case_0_seq_len_64_max_pred_20_masked_lm_prob_0.3"
                            "_random_seed_12345_dupe_factor_1_packed")
    files = sorted(folder.rglob("*.hdf5"))
    assert files and is_packed(files[0]) and not is_packed(root)
    copied = tmp_path / "renamed" / files[0].name   # the file itself says it is packed
    copied.parent.mkdir()
    copied.write_bytes(files[0].read_bytes())
    assert is_packed(copied)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["options"]["pack"] is True
    assert manifest["summary"]["real_token_share"] >= 0.9
    for f in files:
        assert check_file(f).seq_len == 64
        with h5py.File(f) as fh:
            m = fh["input_mask"][:]
            assert m[:-1].all() and fh["input_ids"].dtype == np.int32
            assert dict(fh.attrs) == {PACKED_ATTR: 1}
    r = CliRunner().invoke(cli, ["--data-dir", str(root), "--lang", "xx", "inspect", str(files[0]),
                                 "--show", "1"], catch_exceptions=False)
    assert r.exit_code == 0 and "real tokens" in r.output and "packed row" in r.output, r.output
    page = hdf5_section([(folder, manifest)], "xx").html()   # the report says it too
    assert "packed rows" in page and "a packed row" in page and "B is" not in page


@pytest.mark.parametrize("whole_word", [False, True])
def test_no_row_is_a_lone_separator_and_no_mask_falls_in_padding(setup, whole_word):
    # a stream whose final [SEP] alone would start a row (found on viwiki): search the
    # number of documents and the row length for one
    spec, _ = setup
    docs = make_documents(40, seed=5)
    for n_docs, max_seq in ((n, m) for n in range(5, 40) for m in range(16, 64)):
        corpus = Corpus.from_text(documents_text(docs[:n_docs]), FastWordPiece(spec))
        if len(plan_packed(corpus, 10 ** 9, 1, 9).source) % (max_seq - 1) == 1:
            break
    else:
        pytest.fail("no corpus put the final separator alone in a row")
    plan = plan_packed(corpus, max_seq=max_seq, dupe_factor=1, seed=9)
    masker = Masker(spec, max_seq, P, 0.3, whole_word=whole_word)
    last = pack_batch(corpus, plan, range(len(plan) - 1, len(plan)), masker,
                      np.random.default_rng(1))
    n_real = int(last["input_mask"].sum())
    assert (last["input_ids"][0, 1:n_real] != spec.sep_id).any()
    pos = last["masked_lm_positions"][0]
    assert (pos[pos > 0] < n_real).all() and (pos > 0).any()


def test_a_row_without_candidates_gets_no_mask(setup):
    spec, _ = setup
    ids = np.array([[spec.cls_id, spec.sep_id, 0, 0, 0, 0]], dtype=np.int32)
    out = Masker(spec, 6, 3, 0.3).mask_rows(ids, np.zeros((1, 6), dtype=bool),
                                            np.random.default_rng(0))
    assert (out["masked_lm_positions"] == 0).all() and (out["masked_lm_ids"] == 0).all()
