"""Seeded sampling, the alphabet pass, the sample's words counted where its files are."""
from collections import Counter

from vocab.training.sample import (
    count_sample_words,
    is_heldout_key,
    merge_smallest,
    scan_file,
    sentence_key,
    write_word_counts,
)
from vocab.training.words import BertWords, count_words


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
    assert count_sample_words(path, [1], BertWords(lower_case=True)) == count_words(["második (mondat) ott."])


def test_word_counts_file_is_sorted_by_count_then_word(tmp_path):
    n = write_word_counts(Counter({"b": 2, "a": 2, "c": 5}), tmp_path / "w.tsv")
    assert n == 3
    assert (tmp_path / "w.tsv").read_text(encoding="utf-8") == "c\t5\na\t2\nb\t2\n"
