"""The corpus's tokens estimated from the dump before any stage ran (recipes/corpus_estimate.py)
are within 2x of what `pipeline encode` counts with make pretrain's settings, in every script
the fixtures hold; compressed or not, truncated, or read only in part (issue 60)."""
from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

from recipes.corpus_estimate import estimate_corpus, rounded
from tests.helpers.pretrain_corpus import encoded_tokens
from tests.helpers.wiki_dump import fixture_dump, write_prose_dump


def within_2x(estimated: int, counted: int) -> bool:
    return counted / 2 <= estimated <= counted * 2


def test_on_the_shipped_sample(sample_dump, tmp_path):
    found = estimate_corpus(sample_dump, "hu")
    counted = encoded_tokens(sample_dump, "hu", tmp_path)
    assert within_2x(found.tokens, counted), (found.tokens, counted)
    assert found.share == 1.0 and found.line().startswith("corpus: about ")


@pytest.mark.parametrize("lang, segmenter", [("ja", "fugashi"), ("zh", "jieba"), ("th", "pythainlp"),
                                             ("hy", None)])
def test_on_the_fixtures_of_other_scripts(tmp_path, lang, segmenter):
    if segmenter:
        pytest.importorskip(segmenter)
    dump = fixture_dump(tmp_path, lang)
    found = estimate_corpus(dump, lang)
    counted = encoded_tokens(dump, lang, tmp_path / "data")
    assert within_2x(found.tokens, counted), (found.tokens, counted)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["uk", "vi"])
def test_on_the_real_truncated_dumps(shared_data, tmp_path, lang):
    dump = shared_data / f"{lang}wiki.xml.xz"
    found = estimate_corpus(dump, lang)
    assert found.share < 1   # read in part, scaled up
    counted = encoded_tokens(dump, lang, tmp_path)
    assert within_2x(found.tokens, counted), (found.tokens, counted)


def test_every_compression_gives_the_same_estimate(sample_dump, tmp_path):
    xml = bz2.decompress(sample_dump.read_bytes())
    (tmp_path / "a.xml").write_bytes(xml)
    (tmp_path / "a.xml.gz").write_bytes(gzip.compress(xml))
    (tmp_path / "a.xml.xz").write_bytes(lzma.compress(xml))
    tokens = {estimate_corpus(p, "hu").tokens for p in [sample_dump, *tmp_path.iterdir()]}
    assert len(tokens) == 1


def test_a_truncated_dump_gives_its_complete_pages(sample_dump, tmp_path):
    xml = bz2.decompress(sample_dump.read_bytes())
    cut = tmp_path / "cut.xml.gz"
    cut.write_bytes(gzip.compress(xml)[: len(gzip.compress(xml)) // 2])
    whole, half = estimate_corpus(sample_dump, "hu").tokens, estimate_corpus(cut, "hu").tokens
    assert 0 < half < whole


def test_a_part_read_is_scaled_to_the_whole_file(tmp_path):
    sentences = [f"A {i}. mondat a {i % 97}. falu {i % 13}. utcájáról szól, hosszan." for i in range(400)]
    dump = tmp_path / "big.xml.bz2"
    write_prose_dump(dump, "hu", sentences, n_pages=1500)
    whole = estimate_corpus(dump, "hu", max_xml_bytes=10 ** 9)
    part = estimate_corpus(dump, "hu", max_xml_bytes=300_000)
    assert whole.share == 1.0 and part.share < 0.7
    assert 0.75 < part.tokens / whole.tokens < 1.33, (part.tokens, whole.tokens)


def test_what_is_not_a_dump_gives_no_estimate(tmp_path):
    bad = tmp_path / "x.xml.bz2"
    bad.write_bytes(b"BZh9 not really")
    assert estimate_corpus(bad, "hu") is None
    assert estimate_corpus(tmp_path / "missing.xml", "hu") is None


def test_an_estimate_is_shown_to_two_figures():
    assert rounded(612_345) == 610_000 and rounded(20_090) == 20_000 and rounded(87) == 87
