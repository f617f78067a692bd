"""Seeded sampling, BERT's word split, and the alphabet pass."""
import random
from collections import Counter

import pytest

from vocab.normalizer import CharNormalizer
from vocab.sample import (_word_pattern, bert_words, count_words, is_heldout_key, merge_smallest,
                          scan_file, sentence_key, write_word_counts)
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
    assert [c[3] for c in merged] == [c[3] for c in one.sample]
    assert len(one.sample) == 50 and one.sentences == 300
    # held-out sentences never enter the sample
    assert all(is_heldout_key(c[0]) for c in one.heldout)
    assert not {c[3] for c in one.heldout} & {c[3] for c in one.sample}
    other_seed = scan_file(tmp_path / "all.txt", 0, seed=8, sample_size=50)
    assert [c[3] for c in other_seed.sample] != [c[3] for c in one.sample]


def test_excluded_sentences_stay_out_of_the_sample(tmp_path):
    lines = [f"mondat {i}." for i in range(100)]
    exclude = frozenset(sentence_key(s, 3) for s in lines[:10])
    res = scan_file(_write(tmp_path / "x.txt", lines), 0, seed=3, sample_size=1000,
                    hold_out=False, exclude=exclude)
    assert {c[3] for c in res.sample} == set(lines[10:]) and not res.heldout


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
