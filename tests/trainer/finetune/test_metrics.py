"""Fine-tuning metrics: seqeval's strict entity F1, accuracy and macro-F1 on hand-computed
cases, and SQuAD EM/F1 with the official English normaliser and the language-neutral one."""
from __future__ import annotations

import sys
import unicodedata
import warnings

import pytest

from trainer.finetune.metrics import (
    METRIC_NAMES,
    answer_tokens,
    classification_scores,
    default_normalizer,
    entity_scores,
    normalize_answer,
    squad_scores,
    token_accuracy,
)

# -- tagging -------------------------------------------------------------------------------

def test_entity_scores_are_strict_iob2_where_seqeval_default_is_lenient():
    seqeval = pytest.importorskip("seqeval.metrics")
    gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    pred = [["I-PER", "I-PER", "O", "B-LOC"]]    # PER starts with I-: no entity in IOB2
    scores = entity_scores(gold, pred)
    assert scores["precision"] == 1.0 and scores["recall"] == 0.5
    assert scores["f1"] == pytest.approx(2 / 3)
    # seqeval's default (conlleval) mode reads the I-PER run as an entity: F1 1.0
    assert seqeval.f1_score(gold, pred) == 1.0
    assert entity_scores(gold, gold) == {"f1": 1.0, "precision": 1.0, "recall": 1.0}


def test_entity_scores_count_whole_entities():
    gold = [["B-PER", "I-PER", "O"], ["B-ORG", "O", "B-LOC", "I-LOC"]]
    pred = [["B-PER", "O", "O"], ["B-ORG", "O", "B-LOC", "I-LOC"]]   # PER cut short: wrong
    scores = entity_scores(gold, pred)
    assert (scores["precision"], scores["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert all(isinstance(v, float) for v in scores.values())
    iobes = [["S-PER", "O", "B-LOC", "E-LOC"]]
    assert entity_scores(iobes, iobes)["f1"] == 1.0


def test_entity_scores_all_o_is_zero_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert entity_scores([["O", "O"], ["O"]], [["O", "O"], ["O"]]) == \
            {"f1": 0.0, "precision": 0.0, "recall": 0.0}
        assert entity_scores([["O", "O"]], [["B-X", "O"]])["f1"] == 0.0


def test_entity_scores_bad_input():
    with pytest.raises(ValueError, match="tag 'PER' is neither O nor"):
        entity_scores([["PER"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 1 has 2 gold tags but 1 predicted"):
        entity_scores([["O"], ["O", "O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="2 gold items but 1 predictions"):
        token_accuracy([["O"], ["O"]], [["O"]])


def test_entity_scores_without_seqeval_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "seqeval", None)
    monkeypatch.setitem(sys.modules, "seqeval.metrics", None)
    with pytest.raises(ImportError, match=r"^entity F1 needs seqeval: pip install "
                                          r"'wiki2bert\[finetune\]'$"):
        entity_scores([["B-X"]], [["B-X"]])


def test_token_accuracy():
    assert token_accuracy([["NOUN", "VERB"], ["DET"]], [["NOUN", "NOUN"], ["DET"]]) == \
        pytest.approx(2 / 3)
    assert token_accuracy([], []) == 0.0


# -- classification ------------------------------------------------------------------------

def test_macro_f1_by_hand():
    gold = ["a", "a", "a", "b", "b", "c"]
    pred = ["a", "a", "b", "b", "c", "c"]
    # a: P 2/2 R 2/3 F 0.8; b: P 1/2 R 1/2 F 0.5; c: P 1/2 R 1/1 F 2/3
    scores = classification_scores(gold, pred)
    assert scores["accuracy"] == pytest.approx(4 / 6)
    assert scores["macro_f1"] == pytest.approx((0.8 + 0.5 + 2 / 3) / 3)
    # a label only predicted counts with F1 0; labels in neither are not averaged
    assert classification_scores(["x", "x"], ["x", "y"])["macro_f1"] == pytest.approx(1 / 3)
    assert classification_scores([], []) == {"accuracy": 0.0, "macro_f1": 0.0}


def test_macro_f1_matches_sklearn():
    metrics = pytest.importorskip("sklearn.metrics")
    gold = list("aabbbcdd") * 3 + ["e"]
    pred = list("abbbccda") * 3 + ["f"]
    expected = metrics.f1_score(gold, pred, average="macro", labels=sorted(set(gold + pred)))
    assert classification_scores(gold, pred)["macro_f1"] == pytest.approx(expected)


# -- QA ------------------------------------------------------------------------------------

def test_squad_normaliser_removes_english_articles_and_punctuation():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("an apple, a pear & the (theatre)") == "apple pear theatre"
    assert answer_tokens("A  B.C.") == ["bc"]


def test_squad_scores_like_the_official_script():
    predictions = {"1": "the Eiffel Tower", "2": "Paris France", "3": "", "5": "ignored"}
    gold = {"1": ["Eiffel Tower"], "2": ["Paris", "in Paris"], "3": [], "4": ["x"]}
    # 1: exact; 2: best F1 over golds is 'Paris' (P 1/2, R 1) = 2/3; 3: unanswerable and
    # answered ""; 4: not predicted, counts as ""
    scores = squad_scores(predictions, gold)
    assert scores["exact_match"] == pytest.approx(50.0)
    assert scores["f1"] == pytest.approx(100 * (1 + 2 / 3 + 1 + 0) / 4)
    assert squad_scores({"3": "Paris"}, {"3": []}) == {"exact_match": 0.0, "f1": 0.0}
    # an answer that normalises to nothing is "no answer", as in the v2 script
    assert squad_scores({"3": "the"}, {"3": []}) == {"exact_match": 100.0, "f1": 100.0}
    assert squad_scores({}, {}) == {"exact_match": 0.0, "f1": 0.0}


def test_language_neutral_keeps_articles_and_removes_unicode_punctuation():
    assert normalize_answer("The cat.", "language-neutral") == "the cat"
    assert normalize_answer("«КИЇВ»", "language-neutral") == "київ"
    assert normalize_answer("«Київ»") == "«київ»"            # ASCII punctuation only
    assert normalize_answer("П’ять", "language-neutral") == "пять"
    assert normalize_answer("những người", "language-neutral") == "những người"


def test_vietnamese_composed_and_decomposed_match():
    composed = "Thành phố Hồ Chí Minh"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    assert squad_scores({"q": decomposed}, {"q": [composed]}, "language-neutral") == \
        {"exact_match": 100.0, "f1": 100.0}
    assert squad_scores({"q": decomposed}, {"q": [composed]})["exact_match"] == 0.0


def test_ukrainian_partial_answer():
    scores = squad_scores({"q": "місто Київ"}, {"q": ["«Київ»"]}, "language-neutral")
    assert scores == {"exact_match": 0.0, "f1": pytest.approx(100 * 2 / 3)}


def test_chinese_characters_are_tokens():
    assert answer_tokens("北京大学", "language-neutral") == ["北", "京", "大", "学"]
    assert answer_tokens("2008年北京，奥运会", "language-neutral") == \
        ["2008", "年", "北", "京", "奥", "运", "会"]
    # "北京" against "北京大学": 2 of 2 predicted characters right, 2 of 4 gold found
    scores = squad_scores({"q": "北京"}, {"q": ["北京大学"]}, "language-neutral")
    assert scores == {"exact_match": 0.0, "f1": pytest.approx(100 * 2 / 3)}
    assert squad_scores({"q": "北京"}, {"q": ["北京大学"]})["f1"] == 0.0   # "squad": one word


def test_other_scripts_without_spaces():
    assert answer_tokens("東京タワー", "language-neutral") == ["東", "京", "タ", "ワ", "ー"]
    assert answer_tokens("กิน ข้าว", "language-neutral") == ["กิ", "น", "ข้", "า", "ว"]
    assert answer_tokens("서울 특별시", "language-neutral") == ["서울", "특별시"]   # spaced


def test_default_normalizer_and_names():
    assert default_normalizer(None) == "language-neutral"
    assert default_normalizer("en") == default_normalizer("en-GB") == "squad"
    assert default_normalizer("zh") == default_normalizer("vi") == "language-neutral"
    assert default_normalizer("eng") == "language-neutral"
    assert METRIC_NAMES == {"ner": "entity_f1", "pos": "accuracy", "classify": "accuracy",
                            "qa": "f1"}
    with pytest.raises(ValueError, match="unknown answer normalizer 'mlqa'"):
        normalize_answer("x", "mlqa")
    with pytest.raises(ValueError, match="unknown answer normalizer"):
        squad_scores({}, {"q": ["x"]}, "MLQA")
