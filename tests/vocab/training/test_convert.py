"""spm pieces -> WordPiece tokens: special ids, piece mapping, alphabet, exact size."""
import pytest

from vocab.core.layout import NUM_SPECIALS, bert_specials
from vocab.training.convert import ConversionError, piece_to_token, to_wordpiece


def test_special_tokens_sit_where_google_vocabs_have_them():
    sp = bert_specials()
    assert len(sp) == NUM_SPECIALS == 104
    assert sp[0] == "[PAD]" and sp[1] == "[unused0]" and sp[99] == "[unused98]"
    assert sp[100:] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_piece_mapping():
    assert piece_to_token("▁ház") == "ház"
    assert piece_to_token("ak") == "##ak"
    assert piece_to_token("▁") is None


def test_conversion_maps_dedups_and_adds_the_alphabet():
    pieces = ["▁a", "b", "▁", "▁ab", "▁ab", "ab"]
    tokens, info = to_wordpiece(pieces, {"a", "b", "é"}, vocab_size=1000)
    assert tokens[:NUM_SPECIALS] == bert_specials()
    learned = tokens[NUM_SPECIALS:]
    assert learned[:4] == ["a", "##b", "ab", "##ab"]
    assert len(set(tokens)) == len(tokens)
    for c in "abé":
        assert c in tokens and "##" + c in tokens
    assert info.duplicates == 1 and info.alphabet_added == 4  # ##a, b, é, ##é


def test_pieces_wordpiece_cannot_match_are_dropped():
    # crossing punctuation, CJK pairs, upper case under lower-casing, internal word marks
    pieces = ["▁a.", "(b", "▁中文", "▁Ab", "▁a▁b", "▁ok"]
    tokens, info = to_wordpiece(pieces, set(), vocab_size=1000, lower_case=True)
    assert tokens[NUM_SPECIALS:] == ["ok"]
    assert info.unmatchable == 5
    cased, _ = to_wordpiece(["▁Ab"], set(), vocab_size=1000)
    assert "Ab" in cased


def test_size_is_exact_and_alphabet_entries_survive_trimming():
    pieces = [f"▁w{i}" for i in range(50)] + ["x"]
    tokens, info = to_wordpiece(pieces, {"x", "y"}, vocab_size=NUM_SPECIALS + 20)
    assert len(tokens) == NUM_SPECIALS + 20
    assert {"x", "##x", "y", "##y"} <= set(tokens)
    assert tokens[NUM_SPECIALS:NUM_SPECIALS + 3] == ["w0", "w1", "w2"]  # the best pieces stay
    assert info.trimmed == 51 + 3 - 20


def test_too_small_for_the_alphabet_is_a_clear_error():
    with pytest.raises(ConversionError, match="raise --vocab-size to at least 164"):
        to_wordpiece([], {chr(0x400 + i) for i in range(30)}, vocab_size=NUM_SPECIALS + 10)
