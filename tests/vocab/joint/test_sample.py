"""The joint vocab's sample (vocab/joint/sample.py): each language's share follows the exponent exactly,
on corpora in four scripts (Latin, Cyrillic, Thai, Japanese with MeCab words)."""
from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from pipeline.core.executor import LocalExecutor
from tests.helpers.vocab_corpus import UK_WORDS, make_sentences, make_sentences_from, write_corpus
from vocab.joint.sample import LanguageText, draw_joint_sample, sample_quotas, smoothed_shares, text_shares

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "unspaced"


def inline_map(func, items, desc=None, unit=None):
    return map(func, items)


def script_of_line(line: str) -> str:
    """The language of a sample line, by the scripts of its letters (a Japanese line may hold a
    Latin name: any letter of another script decides)."""
    names = {unicodedata.name(c).split()[0] for c in line if c.isalpha()}
    for script, lang in (("CYRILLIC", "uk"), ("THAI", "th"), ("HIRAGANA", "ja"), ("KATAKANA", "ja"),
                         ("CJK", "ja")):
        if script in names:
            return lang
    assert names == {"LATIN"}, names
    return "hu"


@pytest.fixture(scope="module")
def languages(tmp_path_factory) -> list[LanguageText]:
    """hu 2,000 sentences, uk 500, ja and th the shipped fixtures (tens): very different sizes."""
    root = tmp_path_factory.mktemp("joint")
    write_corpus(root / "hu", make_sentences(2000, seed=1))
    write_corpus(root / "uk", make_sentences_from(UK_WORDS, 500, seed=2))
    out = []
    for lang in ("hu", "uk"):
        out.append(LanguageText(lang, tuple(sorted((root / lang).glob("*.txt")))))
    out.append(LanguageText("ja", (FIXTURES / "ja.txt",), segmenter="mecab"))
    out.append(LanguageText("th", (FIXTURES / "th.txt",), segmenter="pythainlp"))
    return out


@pytest.mark.parametrize("alpha", [1.0, 0.7, 0.3, 0.0])
def test_shares_are_the_smoothed_text_shares(alpha):
    sizes = {"a": 9000, "b": 900, "c": 90, "d": 10}
    q = smoothed_shares(sizes, alpha)
    p = text_shares(sizes)
    z = sum(v ** alpha for v in p.values())
    for k in sizes:
        assert q[k] == pytest.approx(p[k] ** alpha / z, rel=1e-12)
    assert sum(q.values()) == pytest.approx(1.0)
    if alpha == 1.0:
        assert q == pytest.approx(p)
    if alpha == 0.0:
        assert q == pytest.approx({k: 0.25 for k in sizes})
    # smoothing moves share from the large language to the small ones, more as alpha falls
    assert q["a"] <= p["a"] + 1e-12 and q["d"] >= p["d"] - 1e-12


def test_quotas_round_by_largest_remainder_and_sum_to_the_total():
    shares = smoothed_shares({"a": 9000, "b": 900, "c": 90, "d": 10}, 0.3)
    for total in (1, 7, 100, 12_345):
        quotas = sample_quotas(shares, total)
        assert sum(quotas.values()) == total
        assert all(abs(quotas[k] - total * shares[k]) < 1 for k in shares)
    assert sample_quotas({"x": 0.5, "y": 0.5}, 3) == {"x": 2, "y": 1}   # a tie: the first language


@pytest.mark.parametrize("alpha", [1.0, 0.7, 0.3, 0.0])
def test_the_sample_holds_each_language_exactly_its_share(tmp_path, languages, alpha):
    info = draw_joint_sample(inline_map, languages, tmp_path, seed=12345, sample_size=1200, alpha=alpha,
                             keep_text=True)
    figures = info["languages"]
    sizes = {code: f["sentences"] for code, f in figures.items()}
    assert sizes["hu"] == 2000 and sizes["uk"] == 500
    expected = sample_quotas(smoothed_shares(sizes, alpha), 1200)
    # counted in the sample itself: the lines of sample.txt, by their script
    lines = (tmp_path / "sample.txt").read_text(encoding="utf-8").splitlines()
    by_script = Counter(script_of_line(s) for s in lines)
    assert dict(by_script) == {k: v for k, v in expected.items() if v}
    assert {k: f["sample_sentences"] for k, f in figures.items()} == expected
    for code, f in figures.items():
        assert f["text_share"] == pytest.approx(sizes[code] / sum(sizes.values()))
        assert abs(expected[code] - 1200 * f["sample_share"]) < 1
    # Thai (a few sentences) is lifted by smoothing: each of its sentences used several times
    if alpha < 1:
        assert figures["th"]["times_used"] > 1
        assert figures["th"]["sample_sentences"] > figures["th"]["available_sentences"]


def test_each_language_keeps_its_held_out_sentences_out_and_its_words(tmp_path, languages):
    info = draw_joint_sample(inline_map, languages, tmp_path, seed=12345, sample_size=1200, alpha=0.3,
                             keep_text=True)
    sample = set((tmp_path / "sample.txt").read_text(encoding="utf-8").splitlines())
    for lt in languages:
        held = (tmp_path / f"eval_{lt.lang}.txt").read_text(encoding="utf-8").splitlines()
        assert len(held) == info["languages"][lt.lang]["eval_sentences"]
        assert not sample & set(held)
    words = dict(line.split("\t") for line in (tmp_path / "sample.tsv").read_text(encoding="utf-8").splitlines())
    # Thai cut at PyThaiNLP's words, not one word per clause (BERT's split): กรุงเทพมหานคร alone
    assert "กรุงเทพมหานคร" in words
    assert not any(len(w) > 20 and script_of_line(w) == "th" for w in words)


def test_the_same_sample_for_any_number_of_workers(tmp_path, languages):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    a = draw_joint_sample(inline_map, languages, one, seed=7, sample_size=900, alpha=0.5, keep_text=True)
    pool = LocalExecutor(2)
    b = draw_joint_sample(lambda f, items, desc=None, unit=None: pool.map(f, items), languages, two,
                          seed=7, sample_size=900, alpha=0.5, keep_text=True)
    assert a == b
    for name in ("sample.tsv", "sample.txt", "alphabet.json", "eval_th.txt"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
