"""Seeded sampling, BERT's word split, and the alphabet pass."""
import random
from collections import Counter

import pytest

from vocab.normalizer import CharNormalizer
from vocab.sample import (
    _word_pattern,
    bert_words,
    count_sample_words,
    count_words,
    is_heldout_key,
    merge_smallest,
    scan_file,
    sentence_key,
    write_word_counts,
)
from vocab.tokenizer import make_pre_tokenizer


def test_sentence_key_depends_on_text_and_seed_only():
    assert sentence_key("Árvíztűrő tükörfúrógép.", 1) == sentence_key("Árvíztűrő tükörfúrógép.", 1)
    assert sentence_key("Árvíztűrő tükörfúrógép.", 1) != sentence_key("Árvíztűrő tükörfúrógép.", 2)


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_sample_is_the_smallest_keys_whatever_the_file_split(tmp_path):
    lines = [f"mondat {i} ház." for i in range(300)]
    one = scan_file(_write(tmp_path / "all.txt", lines), 0, seed=7, sample_size=50)
    a = scan_file(_write(tmp_path / "a.txt", lines[:170]), 0, seed=7, sample_size=50)
    b = scan_file(_write(tmp_path / "b.txt", lines[170:]), 1, seed=7, sample_size=50)
    merged = merge_smallest(a.sample, b.sample, 50)
    # the sample is keys and positions: (key, file, line), no text
    parts = (lines[:170], lines[170:])
    assert [parts[fi][li] for _k, fi, li in merged] == [lines[li] for _k, _f, li in one.sample]
    assert len(one.sample) == 50 and one.sentences == 300 and all(len(c) == 3 for c in one.sample)
    # held-out sentences never enter the sample
    assert all(is_heldout_key(c[0]) for c in one.heldout)
    assert not {c[3] for c in one.heldout} & {lines[c[2]] for c in one.sample}
    other_seed = scan_file(tmp_path / "all.txt", 0, seed=8, sample_size=50)
    assert [c[2] for c in other_seed.sample] != [c[2] for c in one.sample]


def test_excluded_sentences_stay_out_of_the_sample(tmp_path):
    lines = [f"mondat {i}." for i in range(100)]
    exclude = frozenset(sentence_key(s, 3) for s in lines[:10])
    res = scan_file(_write(tmp_path / "x.txt", lines), 0, seed=3, sample_size=1000,
                    hold_out=False, exclude=exclude)
    assert {lines[c[2]] for c in res.sample} == set(lines[10:]) and not res.heldout


def test_merge_keeps_the_smallest_and_skips_what_cannot_enter():
    a = [(k, 0, k) for k in range(0, 100, 2)]
    b = [(k, 1, k) for k in range(1, 200, 2)]
    assert merge_smallest(a, b, 10) == sorted(a + b)[:10]
    assert merge_smallest(a[:10], [(500, 1, 0)], 10) == a[:10]
    assert merge_smallest([], b, 3) == b[:3]


def test_sample_words_are_counted_where_the_file_is(tmp_path):
    lines = ["Első mondat itt.", "", "Második (mondat) ott.", "Harmadik mondat."]
    path = _write(tmp_path / "f.txt", lines)
    # line numbers count non-blank lines, as scan_file numbers them
    assert count_sample_words(path, [0, 2]) == count_words(["Első mondat itt.", "Harmadik mondat."])
    assert count_sample_words(path, [1], lower_case=True) == count_words(["második (mondat) ott."])


def test_words_are_split_like_bert():
    counts = count_words(["Árvíz-tűrő (tükör)fúrógép, 中文 ok.", "ok"])
    assert counts == Counter({"Árvíz": 1, "-": 1, "tűrő": 1, "(": 1, "tükör": 1, ")": 1,
                              "fúrógép": 1, ",": 1, "中": 1, "文": 1, "ok": 2, ".": 1})
    lower = count_words(["Árvíz ÉS Űr"], lower_case=True)
    assert set(lower) == {"árvíz", "és", "űr"}
    stripped = count_words(["Árvíz ÉS Űr"], lower_case=True, strip_accents=True)
    assert set(stripped) == {"arviz", "es", "ur"}


def test_word_counts_file_is_sorted_by_count_then_word(tmp_path):
    n = write_word_counts(Counter({"b": 2, "a": 2, "c": 5}), tmp_path / "w.tsv")
    assert n == 3
    assert (tmp_path / "w.tsv").read_text(encoding="utf-8") == "c\t5\na\t2\nb\t2\n"


@pytest.mark.parametrize("lower,strip", [(False, False), (True, False), (True, True), (False, True)])
def test_fast_word_split_equals_bert_pre_tokenizer(lower, strip):
    rng = random.Random(0)
    # random code points of every plane in use (new-Unicode punctuation, controls, CJK, ...)
    noise = "".join(chr(c) for c in (rng.randrange(1, 0x30000) for _ in range(20000))
                    if not 0xD800 <= c < 0xE000)
    text = ("ΟΔΟΣ İstanbul e\u0301 ﬁ ｆｕｌｌ 中文字 \u200b\u00ad x\x00y\ufffd ¿Qué? «ok» — "
            "‘a’ “b” ₴5 №3 ½ ① 🙂 Ǆ ß \u2581 \x1c\x85a\u3000b Árvíz-TŰRŐ, tükör.\n" + noise)
    expected = make_pre_tokenizer(lower, strip)(text)
    norm = CharNormalizer(lower, strip)
    assert bert_words(text, norm) == expected
    normalized = norm.text(text)  # the regex fallback gives the same words
    assert _word_pattern(set(normalized)).findall(normalized) == expected
