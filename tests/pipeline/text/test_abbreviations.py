"""Abbreviations learned from the corpus (Punkt's statistics), for any language with "."."""
from __future__ import annotations

import random

from pipeline.text.abbreviations import learn_abbreviations


def corpus(abbreviations: list[str], sentence_final_names: list[str], words: list[str], seed=0) -> str:
    """Sentences where the abbreviations stand mid-sentence before lower-case words and numbers,
    and the names end sentences (followed by a capital)."""
    rng = random.Random(seed)
    out = []
    for i in range(3000):
        body = " ".join(rng.choice(words) for _ in range(8))
        if i % 7 == 0:
            body += f" {rng.choice(abbreviations)}. {rng.randint(1, 300)} {rng.choice(words)}"
        if i % 11 == 0:
            body += f" {rng.choice(abbreviations)}. {rng.choice(words)}"
        if i % 13 == 0:
            body += f" {rng.choice(sentence_final_names)}"
        out.append(body[0].upper() + body[1:] + ".")
    return " ".join(out)


def test_greek_abbreviations_are_learned_and_sentence_final_names_are_not():
    words = "το βιβλίο είναι μεγάλο και η πόλη έχει ιστορία στο κέντρο της χώρας".split()
    text = corpus(["σελ", "βλ", "περ", "εκδ"], ["Αθήνα", "Σπάρτη"], words)
    learned = learn_abbreviations(text)
    assert {"σελ", "βλ", "περ", "εκδ"} <= learned
    assert not {"αθήνα", "σπάρτη", "χώρας", "ιστορία"} & learned


def test_dotted_abbreviations_and_acronyms():
    words = "the river flows through the old town and its long valley".split()
    text = corpus(["e.g", "approx"], ["NATO", "Paris"], words)
    learned = learn_abbreviations(text)
    assert "e.g" in learned and "approx" in learned
    assert "nato" not in learned and "paris" not in learned


def test_scripts_without_periods_learn_nothing():
    assert learn_abbreviations("東京は日本の首都です。人口は多い。" * 200) == frozenset()
    assert learn_abbreviations("") == frozenset()


def test_a_caseless_script_learns_only_short_abbreviations():
    words = "القاهرة هي عاصمة مصر وأكبر مدنها تقع المدينة على ضفاف نهر النيل".split()
    text = corpus(["م", "هـ"], ["السكان", "القرون"], words)
    learned = learn_abbreviations(text)
    assert {"م", "هـ"} <= learned and not {"السكان", "القرون"} & learned
