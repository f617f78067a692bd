"""vocab/reports/compare.py: another tokenizer's pieces laid over BERT's words by their offsets."""
from __future__ import annotations

from vocab.core.word_align import _assign, word_spans


def test_bert_words_with_offsets_into_the_original_text():
    text = "Szeged (Felis),  北京 naïve!"
    spans = word_spans([text])[0]
    assert [text[a:b] for a, b in spans] == ["Szeged", "(", "Felis", ")", ",", "北", "京", "naïve", "!"]


def test_pieces_go_to_the_word_their_first_letter_is_in():
    text = "Szeged (Felis),"
    spans = word_spans([text])[0]           # Szeged ( Felis ) ,
    # XLM-R style: "▁Szeged" (0,6), a lone "▁" (6,7) before "(", "(" (7,8), "Felis" (8,13), ")," (13,15)
    ids = [10, 11, 12, 13, 14]
    offsets = [(0, 6), (6, 7), (7, 8), (8, 13), (13, 15)]
    groups = _assign(text, spans, ids, offsets)
    assert [(w, g) for w, g, _ in groups] == [("Szeged", [10]), ("(", [11, 12]), ("Felis", [13]),
                                             (")", [14]), (",", [])]
    whole = [w for w, g, covered in groups if covered]
    assert whole == ["Szeged", "Felis", ")"]   # "(" took two pieces; "," lies inside "),"
    # an empty-span token (a byte-level "Ġ" before a word) belongs to the word after it
    groups = _assign("a b", word_spans(["a b"])[0], [1, 2, 3], [(0, 1), (2, 2), (2, 3)])
    assert [g for _, g, _ in groups] == [[1], [2, 3]]
