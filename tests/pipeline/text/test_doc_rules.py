"""The TurkuNLP-style document rules: their reasons, per-script word counts, the learned
alphabet and the per-language defaults."""
from __future__ import annotations

import pytest

from pipeline.text.doc_rules import (
    DocStats,
    FilterSettings,
    alphabet_from_text,
    count_words,
    default_settings,
    first_failure,
    learn_alphabet,
    letter_counts,
)

HU = alphabet_from_text("aábcdeéfghiíjklmnoóöőpqrstuúüűvwxyz")


def test_words_are_counted_per_script():
    assert count_words("Budapest Magyarország fővárosa.") == 3
    assert count_words("1990 1991 1992 - 42") == 0           # numbers are not words
    assert count_words("北京是中国的首都。") == 8              # a CJK character is a word
    assert count_words("東京はTokyoです") == 6                  # 東京は, です, and Tokyo
    assert count_words("ประเทศไทย") == len("ประเทศไทย")
    assert count_words("Київ — столиця України.") == 3


def test_cjk_documents_pass_the_word_rules():
    doc = ["北京是中华人民共和国的首都，也是全国的政治和文化中心。", "北京有三千多年的建城史。"]
    st = DocStats.of(doc, alphabet=None)
    assert first_failure(st, FilterSettings()) is None


def test_thai_paragraphs_without_sentence_punctuation_pass_thai_defaults():
    doc = ["ประเทศไทยมีชื่ออย่างเป็นทางการว่าราชอาณาจักรไทย เป็นรัฐชาติอันตั้งอยู่ในภูมิภาคเอเชียตะวันออกเฉียงใต้ "
           "มีพรมแดนทางทิศตะวันออกติดลาวและกัมพูชา ทิศใต้ติดอ่าวไทยและมาเลเซีย"] * 2
    assert first_failure(DocStats.of(doc, None), default_settings("th")) is None
    assert first_failure(DocStats.of(doc, None), FilterSettings()) == "long_sentences"


@pytest.mark.parametrize("doc,settings,reason", [
    (["Egy mondat van itt, nem több, és ez elég hosszú."], FilterSettings(min_sentences=2), "too_few_sentences"),
    (["Rövid szöveg."], FilterSettings(min_sentences=1), "too_few_words"),
    (["Alma körte.", "Szilva barack.", "Dió mogyoró.", "Meggy cseresznye.", "Eper málna."],
     FilterSettings(), "short_sentences"),
    ([" ".join(["szó"] * 150) + "."], FilterSettings(min_sentences=1), "long_sentences"),
    (["Ez egy rendes mondat néhány szóval.", "12 34.", "56 78.", "-- --", "Második rendes mondat itt."],
     FilterSettings(min_words_per_sentence=0), "no_word_sentences"),
    (["Ez (egy) [mondat] -- sok, sok; írásjellel! ... ??? !!! ,,, ;;; ::: ... és még szavakkal is."],
     FilterSettings(min_words=3, min_sentences=1), "punctuation"),
    (["EZ A MONDAT CSUPA NAGYBETŰVEL ÍRÓDOTT ÉS KIABÁL.", "EZ IS NAGYBETŰS MONDAT."], FilterSettings(), "upper_case"),
    (["Az évek 1990 1991 1992 1993 1994 1995 1996 1997 1998 1999 2000 2001 és így tovább sorban."],
     FilterSettings(min_words=3, min_sentences=1), "digits"),
    (["Київ — столиця і найбільше місто України, розташоване на Дніпрі."],
     FilterSettings(alphabet=HU, min_words=3, min_sentences=1), "foreign_letters"),
    (["Egy mondat van itt, nem több, és ez elég hosszú."], FilterSettings(), "too_few_sentences"),
])
def test_each_rule_drops_with_its_reason(doc, settings, reason):
    assert first_failure(DocStats.of(doc, settings.alphabet), settings) == reason


def test_alphabet_is_learned_from_the_main_scripts_of_the_corpus():
    text = ("Київ є столицею України. Його населення становить майже три мільйони людей. " * 20
            + "Kyiv Wikipedia. ")
    alphabet = learn_alphabet(letter_counts(text))
    assert set("київєсто") <= alphabet and "К" in alphabet and "У" in alphabet
    assert not set("Wkpd") & alphabet  # Latin is a minor script here


def test_upper_case_rule_needs_min_cased_for_upper_letters():
    doc = ["NATO ÉS ENSZ TAGJA.", "AZ ORSZÁG NAGY."]  # 24 cased letters, all upper-case
    stats = DocStats.of(doc, None)
    loose = FilterSettings(min_words=1, min_words_per_sentence=1, max_punct_ratio=1)
    assert first_failure(stats, loose) == "upper_case"
    assert first_failure(stats, FilterSettings(**{**loose.__dict__, "min_cased_for_upper": 100})) is None


def test_case_is_judged_only_on_the_alphabets_own_cased_letters():
    """Japanese (caseless) with Latin acronyms, as in 北海道: never "shouting"."""
    text = ("北海道は日本の北部に位置する地域である。JR北海道とNHKの本社がある。" * 30)
    doc = [text[i:i + 36] for i in range(0, len(text), 36)]
    alphabet = learn_alphabet(letter_counts(text))
    st = DocStats.of(doc, alphabet)
    assert st.cased == 0
    assert first_failure(st, default_settings("ja").__class__(alphabet=alphabet, max_words_per_sentence=300)) is None
    assert first_failure(DocStats.of(doc, None), FilterSettings(max_words_per_sentence=300)) is None
    # a learned alphabet that took in Latin changes nothing: the main script is caseless
    assert first_failure(DocStats.of(doc, alphabet | set("JRNHK")), FilterSettings(max_words_per_sentence=300)) is None


def test_latin_acronyms_in_cyrillic_text_are_foreign_not_upper_case():
    doc = ["Компанія NASA, NATO та USA співпрацюють у космосі з країнами.", "Інші країни теж беруть участь."]
    alphabet = alphabet_from_text("абвгґдеєжзиіїйклмнопрстуфхцчшщьюя")
    st = DocStats.of(doc, alphabet)
    assert st.upper == 2 and st.foreign == 11  # NASA, NATO, USA
