"""Word segmenters for scripts without spaces (vocab/core/segmenters.py): real MeCab, jieba and
PyThaiNLP on the project's fixtures; a missing package is one line naming what to install."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.text.language_settings import word_segmenter
from vocab.core import segmenters
from vocab.core.segmenters import SegmenterError, load_segmenter

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "unspaced"


@pytest.mark.parametrize("name, text, words", [
    ("mecab", "東京都に住んでいる。", ["東京", "都", "に", "住ん", "で", "いる", "。"]),
    ("jieba", "我们在北京大学学习。", ["我们", "在", "北京大学", "学习", "。"]),
    ("pythainlp", "ภาษาไทยเป็นภาษาราชการ ของประเทศไทย", None),
])
def test_words_and_their_spans(name, text, words):
    seg = load_segmenter(name)
    got = seg.words(text)
    if words is not None:
        assert got == words
    assert len(got) > 2 and not any(w.isspace() for w in got)
    spans = seg.spans(text)
    assert [text[a:b] for a, b in spans] == got
    assert all(b <= c for (_, b), (c, _) in zip(spans, spans[1:]))


@pytest.mark.parametrize("lang", ["ja", "zh", "th"])
def test_every_fixture_sentence_is_covered_by_its_words(lang):
    seg = load_segmenter(word_segmenter(lang))
    for line in (FIXTURES / f"{lang}.txt").read_text(encoding="utf-8").splitlines():
        if line:
            assert "".join(seg.words(line)) == "".join(line.split())


def test_languages_choose_their_segmenter_and_the_option_wins():
    assert (word_segmenter("ja"), word_segmenter("zh"), word_segmenter("th")) == ("mecab", "jieba", "pythainlp")
    assert word_segmenter("hu") is None and word_segmenter("ja", "none") is None
    assert word_segmenter("hu", "jieba") == "jieba"


def test_a_missing_package_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "jieba", None)   # `import jieba` now fails as if absent
    load_segmenter.cache_clear()
    try:
        with pytest.raises(SegmenterError, match=r"pip install jieba .*wiki2bert\[cjk\]"):
            load_segmenter("jieba")
    finally:
        load_segmenter.cache_clear()


def test_the_cli_reports_a_missing_package_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pythainlp.tokenize", None)
    load_segmenter.cache_clear()
    try:
        res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "th", "vocab",
                                       "--input", str(FIXTURES / "th.txt"), "--output",
                                       str(tmp_path / "v")])
    finally:
        load_segmenter.cache_clear()
    assert res.exit_code != 0
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:") and "pip install pythainlp" in lines[0], res.output
    assert not (tmp_path / "v" / "vocab.txt").exists()


def test_an_unknown_segmenter_is_refused():
    with pytest.raises(SegmenterError, match="unknown word segmenter"):
        segmenters.load_segmenter("kytea")
