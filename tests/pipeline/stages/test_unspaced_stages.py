"""Scripts without spaces through the stages: encode writes word starts and masks whole
segmenter words (zh jieba; ja on a MeCab vocab), filter counts segmenter words, and other
languages' outputs stay byte for byte what they were before segmenters existed."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.encoding.hdf5_format import check_file
from pipeline.stages.filter import _doc_stats
from pipeline.text.doc_rules import FilterSettings, count_words
from vocab.core.segmenters import load_segmenter
from vocab.kinds import load_vocab

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "fixtures" / "unspaced"


def _run(args):
    res = CliRunner().invoke(cli, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res


def _encode(tmp_path, lang, wwm=True, extra=(), encode_extra=()):
    data = tmp_path / "data"
    shards = tmp_path / "shards"
    shards.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / f"{lang}.txt", shards / f"{lang}wiki_training_0.txt")
    _run(["--data-dir", data, "--lang", lang, "--workers", "1", "vocab", "--input",
          FIXTURES / f"{lang}.txt", "--vocab-size", "1200", *extra])
    _run(["--data-dir", data, "--lang", lang, "--workers", "1", "encode", "--input", shards,
          "--max-seq", "64", "--max-pred", "10", "--dupe-factor", "2",
          *(["--whole-word-masking"] if wwm else []), *encode_extra])
    files = sorted((data / lang).glob("hdf5_*/*/*.hdf5"))
    assert len(files) == 1
    return data / lang, files[0]


def test_encode_zh_writes_word_starts_and_masks_whole_words(tmp_path):
    root, path = _encode(tmp_path, "zh")
    assert path.parent.parent.name.endswith("_wwm")
    check_file(path)
    with h5py.File(path) as f:
        assert f["word_starts"].dtype == np.int8 and f["word_starts"].shape == f["input_ids"].shape
        ws, pos = f["word_starts"][:], f["masked_lm_positions"][:]
    whole = 0
    for r in range(len(ws)):
        for p in pos[r][pos[r] > 0]:
            # a masked token inside a word: the word's start is masked too
            start = p
            while ws[r, start] == 0:
                start -= 1
            assert start in pos[r], (r, p)
            whole += start != p
    assert whole > 0
    manifest = json.loads(next(root.glob("hdf5_*/manifest.json")).read_text())
    assert manifest["options"]["word_segmenter"] == "jieba"


def test_encode_zh_packed_rows_carry_word_starts_and_doc_starts(tmp_path):
    _, path = _encode(tmp_path, "zh", encode_extra=("--pack",))
    check_file(path)
    with h5py.File(path) as f:
        ws, ds, mask = f["word_starts"][:], f["doc_starts"][:], f["input_mask"][:]
        ids, pos = f["input_ids"][:], f["masked_lm_positions"][:]
        assert f.attrs["packed"] == 2
    spec = load_vocab(next((tmp_path / "data" / "zh").glob("vocab/vocab.txt")))
    assert (ds[:, 0] == 1).all() and (ws[ds == 1] == 1).all() and not ws[mask == 0].any()
    after = np.zeros_like(ds, dtype=bool)
    after[:, 1:] = ds[:, :-1] == 1
    assert (ws[after & (mask == 1) & (ids != spec.sep_id)] == 1).all()   # a segment's first word
    for r in range(len(ws)):       # whole words masked, never across a segment's [CLS]
        for p in pos[r][pos[r] > 0]:
            start = p
            while ws[r, start] == 0:
                start -= 1
            assert start in pos[r] and ds[r, start] == 0, (r, p)


def test_encode_ja_on_a_mecab_vocab_starts_words_at_mecab_words(tmp_path):
    root, path = _encode(tmp_path, "ja", wwm=False)
    spec = load_vocab(root / "vocab")
    assert spec.kind == "mecab"
    cont = np.array([t.startswith("##") for t in spec.tokens])
    with h5py.File(path) as f:
        ids, ws, pos, mids, mask = (f[k][:] for k in ("input_ids", "word_starts", "masked_lm_positions",
                                                      "masked_lm_ids", "input_mask"))
    for r in range(len(ids)):
        n = np.count_nonzero(pos[r])
        ids[r, pos[r][:n]] = mids[r][:n]          # the original tokens
    real = mask == 1
    # a MeCab word is its first piece and the ## pieces after it, nothing else
    assert (ws[real] == ~cont[ids[real]]).all()
    assert cont[ids[real]].any()


def test_no_segmenter_means_no_word_starts(tmp_path):
    _, path = _encode(tmp_path, "zh", extra=())
    shutil.rmtree(tmp_path / "data" / "zh" / path.parent.parent.name)
    _run(["--data-dir", tmp_path / "data", "--lang", "zh", "--workers", "1", "encode", "--input",
          tmp_path / "shards", "--max-seq", "64", "--max-pred", "10", "--dupe-factor", "2",
          "--word-segmenter", "none"])
    path = next((tmp_path / "data" / "zh").glob("hdf5_*/*/*.hdf5"))
    with h5py.File(path) as f:
        assert "word_starts" not in f


def test_filter_counts_segmenter_words(tmp_path):
    text = "我们在北京大学学习语言学。"
    assert count_words(text) == 12
    assert count_words(text, segment=load_segmenter("jieba").words) == 5
    data = tmp_path / "data"
    kept = {}
    for seg in ("jieba", "none"):
        out = tmp_path / f"filtered_{seg}"
        _run(["--data-dir", data, "--lang", "zh", "--workers", "1", "filter", "--input",
              FIXTURES / "zh.txt", "--output", out, "--no-language-check", "--min-words", "100",
              "--word-segmenter", seg])
        manifest = json.loads((out / "manifest.json").read_text())
        kept[seg] = manifest["summary"]["kept"]
        assert manifest["options"].get("word_segmenter") == (None if seg == "none" else "jieba")
    # the fixture's documents hold ~60 jieba words but ~130 characters each
    assert kept == {"jieba": 0, "none": 2}


def test_a_segmenter_failure_names_the_document(tmp_path):
    def broken(text):
        raise RuntimeError("dictionary corrupt")

    with pytest.raises(StageError, match="segmenter failed.*北京是中华人民共和国的首都"):
        _doc_stats(["北京是中华人民共和国的首都。", "第二句。"], FilterSettings(), broken,
                   tmp_path / "zh_00.txt")


# Digests of the outputs of filter, vocab and encode for Hungarian (no segmenter), made by the
# code before segmenters existed (commit a9c9667) with _hu_outputs below. Other languages'
# outputs must not change: if a later change alters them on purpose, make the new digest the
# same way and say so.
HU_DIGEST = "aab79d6cd6ed99e4663499cb33178fecaa860f604c9b4d73731025d24abf70c5"


def _hu_outputs(tmp_path: Path) -> str:
    """filter -> vocab -> encode (wwm) on the formatted_hu fixture (a paragraph a line, taken as
    sentences); the digest of the filtered text, vocab.txt, tokenizer_config.json and every
    HDF5 dataset's bytes and file."""
    data = tmp_path / "data"
    src = TESTS / "fixtures" / "formatted_hu"
    filtered = tmp_path / "filtered"
    _run(["--data-dir", data, "--lang", "hu", "--workers", "1", "filter", "--input", src,
          "--output", filtered, "--no-language-check", "--min-sentences", "1", "--min-words", "1"])
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, p in enumerate(sorted(filtered.glob("*.txt"))):
        shutil.copy(p, shards / f"huwiki_training_{i}.txt")
    _run(["--data-dir", data, "--lang", "hu", "--workers", "1", "vocab", "--input", filtered,
          "--vocab-size", "600"])
    _run(["--data-dir", data, "--lang", "hu", "--workers", "1", "encode", "--input", shards,
          "--max-seq", "64", "--max-pred", "10", "--dupe-factor", "2", "--whole-word-masking"])
    h = hashlib.sha256()
    for p in sorted(filtered.glob("*.txt")) + [data / "hu" / "vocab" / n for n in
                                               ("vocab.txt", "tokenizer_config.json")]:
        h.update(p.name.encode() + p.read_bytes())
    files = sorted((data / "hu").glob("hdf5_*/*/*.hdf5"))
    assert files
    for p in files:
        with h5py.File(p) as f:
            assert sorted(f) == sorted(["input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                                        "masked_lm_ids", "next_sentence_labels"])
            for k in sorted(f):
                h.update(k.encode() + np.ascontiguousarray(f[k][:]).tobytes())
        h.update(p.read_bytes())   # the file itself, byte for byte
    return h.hexdigest()


def test_other_languages_outputs_are_unchanged(tmp_path):
    assert _hu_outputs(tmp_path) == HU_DIGEST
