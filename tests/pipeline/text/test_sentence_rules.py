"""The rule-based splitter: terminators of every script, abbreviations, numbers, URLs, quotes."""
from __future__ import annotations

import pytest

from pipeline.text.sentence_rules import SentenceSplitter


def split(lang, text):
    return SentenceSplitter.for_language(lang).split(text)


@pytest.mark.parametrize("lang,text,expected", [
    ("ja", "東京は日本の首都です。人口は約1400万人！本当？",
     ["東京は日本の首都です。", "人口は約1400万人！", "本当？"]),
    ("zh", "北京是中国的首都。它有悠久的历史！", ["北京是中国的首都。", "它有悠久的历史！"]),
    ("hi", "यह एक वाक्य है। यह दूसरा है॥ तीसरा", ["यह एक वाक्य है।", "यह दूसरा है॥", "तीसरा"]),
    ("bn", "এটি প্রথম বাক্য। এটি দ্বিতীয়।", ["এটি প্রথম বাক্য।", "এটি দ্বিতীয়।"]),
    ("hy", "Սա առաջին նախադասությունն է։ Սա երկրորդն է։", ["Սա առաջին նախադասությունն է։", "Սա երկրորդն է։"]),
    ("ar", "هل هذا سؤال؟ نعم هذا جواب.", ["هل هذا سؤال؟", "نعم هذا جواب."]),
    ("ur", "یہ پہلا جملہ ہے۔ یہ دوسرا جملہ ہے۔", ["یہ پہلا جملہ ہے۔", "یہ دوسرا جملہ ہے۔"]),
    ("am", "ይህ የመጀመሪያው ነው።ይህ ሁለተኛው ነው።", ["ይህ የመጀመሪያው ነው።", "ይህ ሁለተኛው ነው።"]),
    ("my", "ဒါက ပထမ ဖြစ်သည်။ဒါက ဒုတိယ ဖြစ်သည်။", ["ဒါက ပထမ ဖြစ်သည်။", "ဒါက ဒုတိယ ဖြစ်သည်။"]),
    ("km", "នេះជាប្រយោគទីមួយ។ នេះជាប្រយោគទីពីរ។", ["នេះជាប្រយោគទីមួយ។", "នេះជាប្រយោគទីពីរ។"]),
    ("el", "Τι είναι αυτό; Είναι ένα βιβλίο.", ["Τι είναι αυτό;", "Είναι ένα βιβλίο."]),
    ("uk", "Київ — столиця України. Це велике місто!", ["Київ — столиця України.", "Це велике місто!"]),
    ("el", "Τι είναι αυτό\u037e Είναι ένα βιβλίο.", ["Τι είναι αυτό\u037e", "Είναι ένα βιβλίο."]),
    ("sat", "ᱱᱚᱣᱟ ᱢᱤᱫ ᱟᱹᱭᱟᱹᱛ ᱠᱟᱱᱟ᱾ ᱱᱚᱣᱟ ᱵᱟᱨ ᱟᱹᱭᱟᱹᱛ ᱠᱟᱱᱟ᱾", ["ᱱᱚᱣᱟ ᱢᱤᱫ ᱟᱹᱭᱟᱹᱛ ᱠᱟᱱᱟ᱾", "ᱱᱚᱣᱟ ᱵᱟᱨ ᱟᱹᱭᱟᱹᱛ ᱠᱟᱱᱟ᱾"]),
    ("mni", "ꯃꯁꯤ ꯑꯍꯥꯅꯕꯥ ꯋꯥꯍꯩꯅꯤ꯫ ꯃꯁꯤ ꯑꯅꯤꯁꯨꯕꯥ ꯋꯥꯍꯩꯅꯤ꯫", ["ꯃꯁꯤ ꯑꯍꯥꯅꯕꯥ ꯋꯥꯍꯩꯅꯤ꯫", "ꯃꯁꯤ ꯑꯅꯤꯁꯨꯕꯥ ꯋꯥꯍꯩꯅꯤ꯫"]),
    ("th", "ประเทศไทยเป็นประเทศในเอเชีย กรุงเทพเป็นเมืองหลวง", ["ประเทศไทยเป็นประเทศในเอเชีย กรุงเทพเป็นเมืองหลวง"]),
])
def test_terminators_of_every_script(lang, text, expected):
    assert split(lang, text) == expected


def test_closing_quotes_and_brackets_stay_with_their_sentence():
    assert split("ja", "「はい。」そうです。") == ["「はい。」", "そうです。"]
    assert split("en", 'He said "Go." Then he left. (It rained.) The end.') == [
        'He said "Go."', "Then he left.", "(It rained.)", "The end."]
    assert split("uk", "Він сказав: «Досить!» Потім пішов.") == ["Він сказав: «Досить!»", "Потім пішов."]


def test_initials_decimals_urls_and_dotted_abbreviations_do_not_end_sentences():
    text = ("J. R. R. Tolkien was born in 1892. Pi is 3.14, e.g. in https://example.com/a.b. "
            "The U.S. Army came. It counted 2.000.000. Next one.")
    assert split("en", text) == [
        "J. R. R. Tolkien was born in 1892.",
        "Pi is 3.14, e.g. in https://example.com/a.b.",
        "The U.S. Army came.", "It counted 2.000.000.", "Next one."]


def test_ordinal_dates_in_languages_that_write_them_with_a_dot():
    assert split("hu", "Szent István 1038. augusztus 15-én halt meg. XIV. Lajos 1715. szeptember 1. napján.") == [
        "Szent István 1038. augusztus 15-én halt meg.", "XIV. Lajos 1715. szeptember 1. napján."]
    assert split("de", "Er wurde am 5. Mai geboren. Danach zog er um.") == [
        "Er wurde am 5. Mai geboren.", "Danach zog er um."]
    # English writes no ordinal dots: a number can end a sentence there.
    assert split("en", "He scored 5. Then he left.") == ["He scored 5.", "Then he left."]


def test_language_abbreviations_and_lower_case_continuations():
    assert split("uk", "Він народився 1990 р. у м. Київ. Див. також інші статті.") == [
        "Він народився 1990 р. у м. Київ.", "Див. також інші статті."]
    assert split("hu", "Dr. Kovács kb. öt km-t ment, almát, körtét stb. vett. Ez új mondat.") == [
        "Dr. Kovács kb. öt km-t ment, almát, körtét stb. vett.", "Ez új mondat."]
    assert split("en", "Yahoo! is a company. Really? yes.") == ["Yahoo! is a company.", "Really? yes."]
    # Direct speech: a dash after the closing quote continues the sentence.
    assert split("uk", "«Йди!» — сказав він. Вона пішла.") == ["«Йди!» — сказав він.", "Вона пішла."]


def test_ellipsis_before_a_capital_ends_a_sentence_but_not_before_lower_case():
    assert split("en", "Wait... Then go. And so… on.") == ["Wait...", "Then go.", "And so… on."]


def test_whitespace_only_and_empty_paragraphs_give_no_sentences():
    assert split("en", "") == []
    assert split("en", "   ") == []


def test_single_letter_words_are_not_initials_where_the_language_says_so():
    assert split("vi", "Lào ở Đông Nam Á. Kinh tế yếu, v.v. Đây là James A. Garfield.") == [
        "Lào ở Đông Nam Á.", "Kinh tế yếu, v.v.", "Đây là James A. Garfield."]
    assert split("en", "He fought in World War I. Then he left.") == [
        "He fought in World War I.", "Then he left."]


@pytest.mark.parametrize("lang,text,expected", [
    ("ja", "パンソリ（唱劇ともいう。一種の歌劇）が生まれている。次の文。",
     ["パンソリ（唱劇ともいう。一種の歌劇）が生まれている。", "次の文。"]),
    ("ja", "彼は「もう帰る。明日また来る。」と言った。次の文。",
     ["彼は「もう帰る。明日また来る。」と言った。", "次の文。"]),
    ("en", 'He said "Go. Now." Then he left.', ['He said "Go. Now."', "Then he left."]),
    ("uk", "Він (див. Київ. Також Львів) поїхав. Потім повернувся.",
     ["Він (див. Київ. Також Львів) поїхав.", "Потім повернувся."]),
])
def test_no_sentence_ends_inside_brackets_or_quotes(lang, text, expected):
    assert split(lang, text) == expected


def test_an_unclosed_or_very_long_bracket_protects_nothing():
    from pipeline.text.sentence_rules import MAX_BRACKET_SPAN

    sentences = [f"これは{i}番目の文です。" for i in range(MAX_BRACKET_SPAN // 10 + 1)]
    assert split("ja", "（" + "".join(sentences)) == ["（" + sentences[0]] + sentences[1:]
    long_quote = "「" + "".join(sentences) + "」"
    assert len("".join(sentences)) > MAX_BRACKET_SPAN
    assert len(split("ja", long_quote)) == len(sentences)


def test_a_quotation_of_several_sentences_stays_one_line():
    quote = " ".join(f"Речення номер {i} цитати про життя і буття поета тут." for i in range(14))
    text = f"Він написав: «{quote}» Потім замовк."
    assert 700 < len(quote) < 1200
    assert split("uk", text) == [f"Він написав: «{quote}»", "Потім замовк."]


def test_learned_abbreviations_join_the_language_file():
    text = "Το βιβλίο, σελ. Πέντε μέρη έχει. Επόμενη πρόταση."
    assert SentenceSplitter.for_language("el").split(text) == [
        "Το βιβλίο, σελ.", "Πέντε μέρη έχει.", "Επόμενη πρόταση."]
    assert SentenceSplitter.for_language("el", learned={"σελ"}).split(text) == [
        "Το βιβλίο, σελ. Πέντε μέρη έχει.", "Επόμενη πρόταση."]
