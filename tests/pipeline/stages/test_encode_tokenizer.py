"""`pipeline encode --tokenizer DIR`: any transformers fast tokenizer (WordPiece tokenizer.json,
byte-level BPE, Unigram as XLM-R's) gives AutoTokenizer's ids in pairs and packed rows, its own
cls/sep and pad id (XLM-R's 1), word starts from its word ids, files that pass the contract with
masks that never hit specials or padding, the tokenizer recorded (manifest, file attribute,
folder name); one `Error:` line for each kind of bad tokenizer."""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.encoding.hdf5_format import TOKENIZER_ATTR, check_file, file_tokenizer_fingerprint, is_packed
from pipeline.stages.encode import encode
from tests.helpers.encode_testdata import make_documents, write_shards
from tests.helpers.hf_tokenizers import BUILDERS, bytelevel_bpe_tokenizer
from tests.helpers.packed_rows import documents_of_rows
from vocab.kinds import load_tokenizer

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def docs():
    return make_documents(90, seed=5)


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory, docs):
    root = tmp_path_factory.mktemp("tokenizers")
    texts = [s for d in make_documents(150, seed=21) for s in d]
    return {kind: build(root / f"my-{kind}", texts) for kind, build in BUILDERS.items()}


@pytest.fixture()
def data_dir(tmp_path, docs):
    root = tmp_path / "data"
    write_shards(root / "xx" / "sharded", docs)
    return root


def shard_stream(shard: Path, auto) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """The shard's ids as AutoTokenizer gives them line by line, the word starts of its word
    ids, and each document's ids."""
    ids: list[int] = []
    starts: list[bool] = []
    documents: list[list[int]] = [[]]
    for line in shard.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            if documents[-1]:
                documents.append([])
            continue
        enc = auto(line, add_special_tokens=False)
        words = enc.word_ids()
        ids += enc["input_ids"]
        documents[-1] += enc["input_ids"]
        starts += [w != p or i == 0 for i, (w, p) in enumerate(zip(words, [None, *words]))]
    return np.array(ids, np.int32), np.array(starts, bool), [d for d in documents if d]


def restored(f) -> np.ndarray:
    """input_ids with the masked positions given back their original ids."""
    ids = f["input_ids"][:]
    pos, orig = f["masked_lm_positions"][:], f["masked_lm_ids"][:]
    rows, cols = np.nonzero(pos)
    ids[rows, pos[rows, cols]] = orig[rows, cols]
    return ids


def find(stream: np.ndarray, part: np.ndarray) -> list[int]:
    """Offsets where `part` occurs in `stream` (at most two: enough to know it is unique)."""
    hay, needle, out, at = stream.tobytes(), part.astype(np.int32).tobytes(), [], 0
    while len(out) < 2:
        at = hay.find(needle, at)
        if at < 0:
            break
        if at % 4 == 0:
            out.append(at // 4)
        at += 1
    return out


def check_masks(f, spec) -> None:
    """check_file passes; masked positions are real tokens, never specials or padding, and random
    replacements are real pieces."""
    check_file(f.filename)
    special = np.array([i for i, t in enumerate(spec.tokens) if spec.is_special(t)])
    pos, orig, ids = f["masked_lm_positions"][:], f["masked_lm_ids"][:], f["input_ids"][:]
    mask = f["input_mask"][:]
    valid = pos > 0
    rows = np.nonzero(valid)[0]
    assert (mask[rows, pos[valid]] == 1).all()
    assert not np.isin(orig[valid], special).any()
    now = ids[rows, pos[valid]]
    assert not np.isin(now[(now != spec.mask_id)], special).any()
    assert (ids[mask == 0] == spec.pad_id).all()          # the tokenizer's own pad id


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_pairs_are_autotokenizers_ids_with_its_specials(data_dir, tokenizers, kind):
    folder = tokenizers[kind]
    spec = load_tokenizer(folder)
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    s = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=folder, max_seq=64, max_pred=10)
    out = Path(s["output"])
    assert out.parent.name.endswith(f"_tok-my-{kind}-{spec.fingerprint[:8]}")
    for shard in sorted((data_dir / "xx" / "sharded").glob("*.txt")):
        stream, starts, _ = shard_stream(shard, auto)
        with h5py.File(out / f"{shard.stem}.hdf5", "r") as f:
            check_masks(f, spec)
            assert f.attrs[TOKENIZER_ATTR] == spec.fingerprint and not is_packed(f.filename)
            ids, mask, seg, ws = restored(f), f["input_mask"][:], f["segment_ids"][:], f["word_starts"][:]
        assert (ids[:, 0] == auto.cls_token_id).all()
        checked = 0
        for row, m, sg, w in zip(ids, mask, seg, ws):
            n = int(m.sum())
            seps = np.flatnonzero(row[:n] == auto.sep_token_id)
            assert len(seps) == 2 and seps[1] == n - 1       # <s> A </s> B </s>: one separator
            a, b = row[1:seps[0]], row[seps[0] + 1:n - 1]
            # B's segment id is what the tokenizer's post-processor gives a pair's second text
            assert set(sg[seps[0] + 1:n]) == {auto.backend_tokenizer.encode("x", "y").type_ids[-1]}
            for part, first in ((a, 1), (b, seps[0] + 1)):
                at = find(stream, part)
                assert at, "a segment is not a stretch of AutoTokenizer's ids"
                if len(at) == 1:   # word starts from the tokenizer's word ids (a segment starts a word)
                    assert w[first] == 1
                    assert (w[first + 1:first + len(part)] == starts[at[0] + 1:at[0] + len(part)]).all()
                    checked += 1
        assert checked > len(ids) // 2


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_packed_rows_are_the_documents_in_autotokenizers_ids(data_dir, tokenizers, kind):
    folder = tokenizers[kind]
    spec = load_tokenizer(folder)
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    s = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=folder, max_seq=64, max_pred=16,
               pack=True, dupe_factor=1)
    out = Path(s["output"])
    assert out.parent.name.endswith("_packed")
    for shard in sorted((data_dir / "xx" / "sharded").glob("*.txt")):
        stream, starts, documents = shard_stream(shard, auto)
        with h5py.File(out / f"{shard.stem}.hdf5", "r") as f:
            check_masks(f, spec)
            assert is_packed(f.filename) and file_tokenizer_fingerprint(f.filename) == spec.fingerprint
            ids, mask, starts = restored(f), f["input_mask"][:], f["doc_starts"][:]
        got = documents_of_rows(ids, mask, starts, spec.cls_id, spec.sep_id)
        assert sorted(got) == sorted(tuple(d) for d in documents)   # every document once, in its ids


def test_xlmr_like_padding_is_its_pad_id(data_dir, tokenizers):
    folder = tokenizers["unigram"]
    spec = load_tokenizer(folder)
    assert spec.pad_id == 1
    for pack in (False, True):
        s = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=folder, max_seq=128,
                   max_pred=20, pack=pack)
        padded = 0
        for path in Path(s["output"]).glob("*.hdf5"):
            with h5py.File(path, "r") as f:
                ids, mask = f["input_ids"][:], f["input_mask"][:]
                assert (ids[mask == 0] == 1).all() and not (ids[mask == 1] == 1).any()
                padded += int((mask == 0).sum())
        assert padded > 0


def test_manifest_records_the_tokenizer_for_the_trainer(data_dir, tokenizers, tmp_path):
    folder = tokenizers["bpe"]
    spec = load_tokenizer(folder)
    s = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=folder)
    m = json.loads((Path(s["output"]).parent / "manifest.json").read_text(encoding="utf-8"))
    assert m["vocab"] == str(folder.resolve())              # the trainer reads this key
    assert m["tokenizer"] == {"folder": str(folder.resolve()), "kind": "bpe", "fingerprint": spec.fingerprint,
                              "size": spec.size, "pad_id": 1}
    assert m["options"]["tokenizer"] == {"kind": "bpe", "fingerprint": spec.fingerprint}
    # another tokenizer never shares the folder; the same one encodes the same bytes at any --workers
    other = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=tokenizers["unigram"])
    assert Path(other["output"]).parent != Path(s["output"]).parent
    two = encode(data_dir=data_dir, lang="xx", workers=2, tokenizer=folder, output=tmp_path / "w2")
    for p in Path(s["output"]).glob("*.hdf5"):
        assert p.read_bytes() == (Path(two["output"]) / p.name).read_bytes()


def test_whole_word_masking_masks_whole_tokenizer_words(data_dir, tokenizers):
    folder = tokenizers["bpe"]
    s = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=folder, whole_word_masking=True,
               max_seq=64, max_pred=10)
    assert s["output"].split("/")[-2].endswith(folder.name.join(("_wwm_tok-", "-")) + load_tokenizer(
        folder).fingerprint[:8])
    with h5py.File(next(Path(s["output"]).glob("*training*.hdf5")), "r") as f:
        pos, ws, mask = f["masked_lm_positions"][:], f["word_starts"][:], f["input_mask"][:]
    for p, w, m in zip(pos, ws, mask):
        chosen = np.zeros(len(w), bool)
        chosen[p[p > 0]] = True
        word = np.cumsum(w) * m
        for g in np.unique(word[chosen]):   # a chosen word is chosen whole
            assert chosen[word == g].all()


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_bad_tokenizers_are_one_error_line_each(data_dir, tokenizers, tmp_path, docs):
    base = ["--data-dir", data_dir, "--lang", "xx", "--workers", "1", "encode"]
    cases = {
        "nowhere": (tmp_path / "nowhere", "does not exist"),
        "no fast tokenizer": (tmp_path / "card_only", "holds no tokenizer"),
        "no mask token": (tmp_path / "nomask", "no mask token"),
    }
    (tmp_path / "card_only").mkdir()
    (tmp_path / "card_only" / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    bytelevel_bpe_tokenizer(tmp_path / "nomask", [s for d in docs for s in d], mask=False)
    for what, (folder, message) in cases.items():
        r = run(*base, "--tokenizer", folder)
        assert r.exit_code == 1, what
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error:") and message in lines[0], (what, r.output)
    r = run(*base, "--tokenizer", tokenizers["bpe"], "--vocab", tokenizers["bpe"])
    assert r.exit_code == 1 and "not both" in r.output
    assert not any(p.name.startswith("hdf5_") for p in (data_dir / "xx").iterdir())


def test_vocab_txt_data_records_its_fingerprint_and_keeps_its_layout(data_dir, docs):
    from tests.helpers.encode_testdata import documents_text, vocab_tokens, write_vocab

    vocab = write_vocab(data_dir / "xx" / "vocab", vocab_tokens(documents_text(docs)), lower_case=False)
    (vocab / "manifest.json").write_text("{}", encoding="utf-8")
    spec = load_tokenizer(vocab)
    s = encode(data_dir=data_dir, lang="xx", workers=1)
    root = Path(s["output"]).parent
    assert root.name == "hdf5_lower_case_0_seq_len_128_max_pred_20_masked_lm_prob_0.15_random_seed_12345_dupe_factor_5"
    m = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    assert m["vocab"] == str((vocab / "vocab.txt").resolve()) and "tokenizer" not in m["options"]
    assert m["tokenizer"] == {"folder": str(vocab.resolve()), "kind": "wordpiece", "fingerprint": spec.fingerprint,
                              "size": spec.size, "pad_id": 0}
    for p in Path(s["output"]).glob("*.hdf5"):
        with h5py.File(p, "r") as f:
            assert not f.attrs.keys() and "word_starts" not in f


def test_inspect_reads_the_tokenizer_the_manifest_records(data_dir, tokenizers):
    s = encode(data_dir=data_dir, lang="xx", workers=1, tokenizer=tokenizers["unigram"], max_seq=64, max_pred=10)
    r = run("--data-dir", data_dir, "--lang", "xx", "inspect", next(Path(s["output"]).glob("*training*.hdf5")))
    assert r.exit_code == 0, r.output
    assert "my-unigram" in r.output.splitlines()[0]
    a_line = next(line for line in r.output.splitlines() if line.strip().startswith("A:"))
    assert a_line.split()[1] == "<s>" and a_line.rstrip().endswith("</s>")
