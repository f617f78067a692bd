"""Segmenter words at encode time (vocab/core/word_starts.py, pipeline/encoding/masking.py): the ids
stay BERT's, word starts follow the segmenter, and whole-word masking takes whole words."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.encoding.instances import Corpus, plan_instances
from pipeline.encoding.masking import Masker
from pipeline.stages.vocab import build_vocab
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.core.segmenters import load_segmenter
from vocab.core.word_starts import SegmentedWordPiece, word_groups
from vocab.kinds import load_vocab

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "unspaced"


@pytest.fixture(scope="module")
def vocabs(tmp_path_factory):
    root = tmp_path_factory.mktemp("unspaced")
    out = {}
    for lang in ("zh", "th"):
        out[lang] = root / lang
        build_vocab(data_dir=root, lang=lang, workers=1, input=FIXTURES / f"{lang}.txt",
                    output=out[lang], vocab_size=1000)
    return {lang: load_vocab(p) for lang, p in out.items()}


@pytest.mark.parametrize("lang, segmenter", [("zh", "jieba"), ("th", "pythainlp")])
def test_ids_are_berts_and_words_are_the_segmenters(vocabs, lang, segmenter):
    spec = vocabs[lang]
    text = (FIXTURES / f"{lang}.txt").read_text(encoding="utf-8").rstrip("\n")
    sw = SegmentedWordPiece(spec, load_segmenter(segmenter))
    ids, counts, starts = sw.encode_words(text)
    ref_ids, ref_counts = FastWordPiece(spec).encode_text(text)
    assert ids.tolist() == ref_ids.tolist() and counts.tolist() == ref_counts.tolist()
    assert len(starts) == len(ids) and starts.any() and not starts.all()


def test_a_chinese_word_is_its_characters_together(vocabs):
    spec = vocabs["zh"]
    sw = SegmentedWordPiece(spec, load_segmenter("jieba"))
    ids, _, starts = sw.encode_words("我们在北京大学学习。")
    words = ["".join(spec.tokens[i] for i in g) for g in word_groups(ids.tolist(), starts.tolist())]
    assert words == ["我们", "在", "北京大学", "学习", "。"]
    assert all(len(spec.tokens[i]) == 1 for i in ids)   # tokens stay single characters


def _groups(starts_row, cand_row):
    """Position groups of one instance: a start and the candidates after it."""
    groups, cur = [], []
    for j, (s, c) in enumerate(zip(starts_row, cand_row)):
        if not c:
            continue
        if s and cur:
            groups.append(cur)
            cur = []
        cur.append(j)
    return groups + ([cur] if cur else [])


def test_whole_word_masking_masks_whole_segmenter_words(vocabs):
    spec = vocabs["zh"]
    text = (FIXTURES / "zh.txt").read_text(encoding="utf-8")
    corpus = Corpus.from_text(text, SegmentedWordPiece(spec, load_segmenter("jieba")))
    assert corpus.word_starts is not None and len(corpus.word_starts) == len(corpus.tokens)
    plan = plan_instances(corpus, max_seq=48, dupe_factor=3, short_seq_prob=0.1, seed=1)
    masker = Masker(spec, max_seq=48, max_pred=8, masked_lm_prob=0.15, whole_word=True)
    out = masker.make_batch(corpus.tokens, plan, np.random.default_rng(0), word_starts=corpus.word_starts)
    ws, mask = out["word_starts"], out["input_mask"]
    assert ws.dtype == np.int8 and ws.shape == out["input_ids"].shape
    assert not (ws.astype(bool) & ~mask.astype(bool)).any()          # 0 in padding
    ids = out["input_ids"]
    special = np.isin(ids, [spec.cls_id, spec.sep_id]) & (mask == 1)
    assert (ws[special] == 1).all()                                   # [CLS], [SEP]: words of their own
    multi = 0
    for r in range(len(ids)):
        n = int(np.count_nonzero(out["masked_lm_positions"][r]))
        masked = set(out["masked_lm_positions"][r][:n].tolist())
        cand = (mask[r] == 1) & ~special[r]
        for g in _groups(ws[r], cand):
            hit = masked & set(g)
            assert not hit or hit == set(g), (r, g, masked)         # all or nothing
            multi += bool(hit) and len(g) > 1
    assert multi > 10   # words of several characters were masked whole


def test_without_word_starts_the_batch_is_unchanged(vocabs):
    spec = vocabs["zh"]
    text = (FIXTURES / "zh.txt").read_text(encoding="utf-8")
    corpus = Corpus.from_text(text, FastWordPiece(spec))
    assert corpus.word_starts is None
    plan = plan_instances(corpus, max_seq=48, dupe_factor=1, short_seq_prob=0.1, seed=1)
    masker = Masker(spec, max_seq=48, max_pred=8, masked_lm_prob=0.15, whole_word=True)
    out = masker.make_batch(corpus.tokens, plan, np.random.default_rng(0))
    assert "word_starts" not in out


def test_check_file_checks_word_starts_when_present(tmp_path):
    import h5py

    from pipeline.encoding.hdf5_format import DATASETS, HDF5FormatError, check_file

    path = tmp_path / "x.hdf5"
    with h5py.File(path, "w") as f:
        for key, (dtype, width) in DATASETS.items():
            f[key] = np.zeros((3,) if width is None else (3, 16 if width == "L" else 4), dtype)
    assert check_file(path).seq_len == 16          # without word_starts: NVIDIA's six keys
    with h5py.File(path, "a") as f:
        f["word_starts"] = np.zeros((3, 15), np.int8)
    with pytest.raises(HDF5FormatError, match="word_starts"):
        check_file(path)
