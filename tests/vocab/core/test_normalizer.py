"""BERT's normaliser one character at a time, and the alphabet it gives."""
from vocab.core.normalizer import CharNormalizer, alphabet_of, make_normalizer


def test_alphabet_follows_the_case_setting_and_skips_whitespace_and_controls():
    text = ["Árvíz\u00a0TŰRŐ\t\u200bx\x07", "中"]
    assert alphabet_of(text, CharNormalizer()) == set("ÁrvízTŰRŐx中")
    assert alphabet_of(text, CharNormalizer(lower_case=True)) == set("árvíztűrőx中")
    assert alphabet_of(text, CharNormalizer(lower_case=True, strip_accents=True)) == set("arviztuox中") | {"r"}


def test_char_and_text_equal_the_normaliser_on_whole_text():
    text = "Árvíztűrő TÜKÖRFÚRÓGÉP 中文 Ѯ\u0301 x\u200by ﬁ"
    for lower, strip in ((False, False), (True, False), (True, True), (False, True)):
        norm = CharNormalizer(lower, strip)
        assert norm.text(text) == make_normalizer(lower, strip).normalize_str(text)
        assert "".join(norm.char(c) for c in text) == norm.text(text)
