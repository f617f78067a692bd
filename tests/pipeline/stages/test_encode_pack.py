"""`pipeline encode --pack` (layout 2): files marked `packed = 2` with doc_starts that pass the
contract, the same bytes for any --workers, rows of 8,192 tokens, the context figures of the
summary on a hand-made corpus, inspect and the report showing them, and a finished run of the
layout before redone."""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.encoding.hdf5_format import PACKED_ATTR, check_file, is_packed, packed_layout
from pipeline.encoding.instances import Corpus
from pipeline.report.hdf5 import hdf5_section
from pipeline.stages.encode import encode
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_shards, write_vocab
from tests.helpers.packed_rows import documents_of_rows, unmask
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.kinds import load_vocab


def data_dir_with(root: Path, shards: dict[str, str], tokens: list[str]) -> Path:
    """DATA_DIR/xx with these shard texts and a vocab of these tokens, as the stages leave them."""
    sharded = root / "xx" / "sharded"
    sharded.mkdir(parents=True)
    for name, text in shards.items():
        (sharded / name).write_text(text, encoding="utf-8")
    (sharded / "manifest.json").write_text(json.dumps({"stage": "shard", "outputs": list(shards)}))
    write_vocab(root / "xx" / "vocab", tokens, lower_case=False)
    (root / "xx" / "vocab" / "manifest.json").write_text(json.dumps({"stage": "vocab"}))
    return root


@pytest.fixture()
def data_dir(tmp_path):
    docs = make_documents(80, seed=5)
    root = tmp_path / "data"
    write_shards(root / "xx" / "sharded", docs)
    write_vocab(root / "xx" / "vocab", vocab_tokens(documents_text(docs)), lower_case=False)
    (root / "xx" / "vocab" / "manifest.json").write_text(json.dumps({"stage": "vocab"}))
    return root


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_encode_pack_writes_layout_2_that_inspect_and_the_report_show(data_dir, tmp_path):
    r = run("--data-dir", data_dir, "--lang", "xx", "encode", "--pack", "--max-seq", "64",
            "--max-pred", "20", "--masked-lm-prob", "0.3", "--dupe-factor", "1")
    assert r.exit_code == 0, r.output
    folder = data_dir / "xx" / ("hdf5_lower_case_0_seq_len_64_max_pred_20_masked_lm_prob_0.3"
                                "_random_seed_12345_dupe_factor_1_packed")
    files = sorted(folder.rglob("*.hdf5"))
    assert files and is_packed(files[0]) and packed_layout(files[0]) == 2 and not is_packed(data_dir)
    copied = tmp_path / "renamed" / files[0].name   # the file itself says it is packed
    copied.parent.mkdir()
    copied.write_bytes(files[0].read_bytes())
    assert packed_layout(copied) == 2
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["options"]["pack"] is True and manifest["rules"] == {"packed_layout": 2}
    s = manifest["summary"]
    assert s["packed_layout"] == 2 and s["real_token_share"] >= 0.9
    assert set(s["article_tokens"]) == {f"p{q}" for q in range(10, 100, 10)} | {"max"}
    assert set(s["tokens_with_context"]) == {"512", "2048", "8192"}
    assert "article_token_bins" in manifest and all("article_token_bins" not in i for i in manifest["shards"])
    assert not (folder / ".stage").exists()          # the spilled ids went with the work folder
    for f in files:
        assert check_file(f).seq_len == 64
        with h5py.File(f) as fh:
            m = fh["input_mask"][:]
            assert m[:-1].all() and fh["input_ids"].dtype == np.int32 and fh["doc_starts"].dtype == np.int8
            assert dict(fh.attrs) == {PACKED_ATTR: 2}
            assert (fh["doc_starts"][:, 0] == 1).all()
    r = run("--data-dir", data_dir, "--lang", "xx", "inspect", files[0], "--show", "3")
    assert r.exit_code == 0 and "real tokens" in r.output and "packed row" in r.output, r.output
    assert "segment" in r.output and "\n  | [CLS]" in r.output and "tokens whose segment" in r.output
    assert "article tokens       p10 " in r.output
    page = hdf5_section([(folder, manifest)], "xx").html()   # the report says it too
    assert "packed rows" in page and "a packed row" in page and "B is" not in page
    assert "article length in tokens" in page and "tokens with at least 512 / 2,048 / 8,192" in page


def test_same_bytes_for_one_or_two_workers(data_dir, tmp_path):
    sums = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        r = run("--data-dir", data_dir, "--lang", "xx", "--workers", workers, "encode", "--pack",
                "--max-seq", "48", "--max-pred", "8", "--dupe-factor", "2", "--output", out)
        assert r.exit_code == 0, r.output
        sums.append({p.name: p.read_bytes() for p in sorted(out.rglob("*.hdf5"))})
    assert sums[0] == sums[1] and len(sums[0]) == 3


def test_rows_of_8192_tokens_on_a_small_corpus(tmp_path):
    sents = [s for d in make_documents(120, seed=11) for s in d]
    long_docs = [sents[i:i + n] for i, n in zip((0, 700, 900, 1000), (700, 200, 100, 450))]
    text = documents_text(long_docs)
    root = data_dir_with(tmp_path / "data", {"xxwiki_training_0.txt": text}, vocab_tokens(text))
    s = encode(data_dir=root, lang="xx", workers=1, pack=True, max_seq=8192, max_pred=1300,
               dupe_factor=1)
    path = Path(s["output"]) / "xxwiki_training_0.hdf5"
    assert check_file(path).seq_len == 8192 and packed_layout(path) == 2
    spec = load_vocab(root / "xx" / "vocab" / "vocab.txt")
    corpus = Corpus.from_text(text, FastWordPiece(spec))
    b = corpus.doc_token_bounds
    assert b[-1] > 2 * 8192 and np.diff(b).max() > 8192
    with h5py.File(path) as f:
        arrays = {k: f[k][:] for k in f}
    docs = documents_of_rows(unmask(arrays), arrays["input_mask"], arrays["doc_starts"],
                             spec.cls_id, spec.sep_id)
    assert sorted(docs) == sorted(tuple(corpus.tokens[b[d]:b[d + 1]]) for d in range(corpus.n_docs))
    assert s["tokens_with_context"]["2048"] > 0.5 and s["article_tokens"]["max"] == np.diff(b).max()
    n = (arrays["masked_lm_positions"] > 0).sum(1)
    one = (arrays["doc_starts"].sum(1) == 1) & ~(unmask(arrays) == spec.sep_id).any(1)
    assert one.any() and (n[one] == round(0.15 * 8191)).all()   # one article, all but [CLS] maskable


def test_the_summary_on_a_hand_made_corpus(tmp_path):
    """One article of 2,560 tokens in rows of 2,048: [CLS] + 2,047, then [CLS] + 513 + [SEP];
    ten of 10, 20, ..., 100 tokens in one row of the test shard."""
    def doc(n):
        return "\n".join(" ".join(["ab"] * 64) for _ in range(n // 64)) + "\n" + " ".join(["ab"] * (n % 64))

    shards = {"xxwiki_training_0.txt": doc(2560).rstrip() + "\n",
              "xxwiki_test_0.txt": "\n\n".join(doc(n).strip() for n in range(10, 101, 10)) + "\n"}
    tokens = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "ab", "cd"]
    root = data_dir_with(tmp_path / "data", shards, tokens)
    s = encode(data_dir=root, lang="xx", workers=1, pack=True, max_seq=2048, max_pred=300, dupe_factor=1)
    assert s["tokens"] == 2560 + 550 and s["instances"] == 3
    assert s["article_tokens"] == {**{f"p{q}": q + 10 for q in range(10, 100, 10)}, "max": 2560}
    assert s["tokens_in_articles_of"] == {"512": round(2560 / 3110, 4), "2048": round(2560 / 3110, 4),
                                          "8192": 0.0}
    real = 2048 + 515 + 570
    assert s["tokens_with_context"] == {"512": round(2563 / real, 4), "2048": round(2048 / real, 4),
                                        "8192": 0.0}
    assert s["real_token_share"] == round(real / (3 * 2048), 4)


def test_a_finished_run_of_the_layout_before_is_redone(data_dir, tmp_path, caplog):
    out = tmp_path / "o"
    s = encode(data_dir=data_dir, lang="xx", workers=1, pack=True, max_seq=32, max_pred=5,
               dupe_factor=1, output=out)
    manifest = Path(s["output"]).parent / "manifest.json"
    m = json.loads(manifest.read_text())
    del m["rules"]                                    # as the encode before layout 2 wrote it
    manifest.write_text(json.dumps(m))
    files = sorted(Path(s["output"]).glob("*.hdf5"))
    with h5py.File(files[0], "a") as f:              # and its files
        f.attrs[PACKED_ATTR] = 1
        del f["doc_starts"]
    assert packed_layout(files[0]) == 1
    again = encode(data_dir=data_dir, lang="xx", workers=1, pack=True, max_seq=32, max_pred=5,
                   dupe_factor=1, output=out)
    assert "made by other rules" in caplog.text and again == s
    assert packed_layout(files[0]) == 2 and check_file(files[0]).seq_len == 32
    assert json.loads(manifest.read_text())["rules"] == {"packed_layout": 2}
