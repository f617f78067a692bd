"""language_id: the same probabilities as langdetect's own Detector (seed 0), to the bit, in
every script; its profiles cache on disk is optional and rebuilt when damaged."""
from __future__ import annotations

import lzma

import numpy as np
import pytest
from langdetect import DetectorFactory, detect_langs, detector_factory
from langdetect.lang_detect_exception import LangDetectException

from pipeline.text import language_id

TEXTS = {
    "uk": "Київ — столиця та найбільше місто України. Розташований на річці Дніпро, є політичним, "
          "соціально-економічним, транспортним і освітньо-науковим центром країни.",
    "ru": "Москва — столица России, город федерального значения, административный центр "
          "Центрального федерального округа и центр Московской области.",
    "vi": "Hà Nội là thủ đô của nước Cộng hòa Xã hội chủ nghĩa Việt Nam, đồng thời là thành phố "
          "lớn thứ hai cả nước về dân số.",
    # the same Vietnamese with combining marks (NGram.normalize_vi composes them)
    "vi-decomposed": "Ha\u0300 No\u0323i la\u0300 thu\u0309 đô cu\u0309a nươ\u0301c Vie\u0323t Nam.",
    "ja": "東京都は日本の首都であり、関東地方に位置する。カタカナのテキストとひらがなのぶんしょう。",
    "zh": "北京市是中华人民共和国的首都，是全国的政治中心、文化中心。臺灣位於東亞，國語為官方語言。",
    "hi": "भारत दक्षिण एशिया में स्थित एक देश है। यह जनसंख्या के आधार पर विश्व का सबसे बड़ा देश है।",
    "mr": "महाराष्ट्र हे भारताच्या पश्चिम भागातील एक राज्य आहे. मुंबई ही महाराष्ट्राची राजधानी आहे.",
    "bn": "বাংলাদেশ দক্ষিণ এশিয়ার একটি সার্বভৌম রাষ্ট্র। ঢাকা বাংলাদেশের রাজধানী ও বৃহত্তম শহর৷",
    "el": "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας και μία από τις αρχαιότερες πόλεις του κόσμου.",
    "ar": "القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها، وتقع على ضفاف نهر النيل. ی فارسی",
    "ko": "서울특별시는 대한민국의 수도이자 최대 도시이다.",
    "en": "London is the capital and largest city of England and the United Kingdom, with a "
          "population of around nine million. See https://www.london.gov.uk or mail info@london.uk.",
    "hu": "Budapest Magyarország fővárosa, egyben legnépesebb települése. ÁRVÍZTŰRŐ TÜKÖRFÚRÓGÉP",
    "ro": "București este capitala României și, în același timp, cel mai populat oraș al țării.",
    "mixed": "Організація NATO (англ. North Atlantic Treaty Organization) та USA; Β. Ж. ABC-def «x»",
    "caps": "ЦЕНТРАЛЬНА ВИБОРЧА КОМІСІЯ UKRAINE NATO OTAN",
    "latin-ext-additional": "ẠẠẠẠẠ ab",   # non-Latin by langdetect's count: Latin is dropped
    "astral-and-marks": "😀👍 𠀀𠀁𠀂 \u200d\u200c \u200f שלום עולם ̀́ ﻼ ＡＢＣ ｶﾀｶﾅ",
    "short": "Ок",
    "one-letter": "a",
    "url-only": "https://uk.wikipedia.org/wiki/Київ?action=edit&section=1",
    "mail-only": "someone.else@example.com",
    "no-letters": "12 345 — 67,8% (1999–2004) !!! ... ¿?",
    "empty": "",
    "spaces": "  Київ   і    Львів  \n\t Одеса   ",
}
CODES = [("uk",), ("ru",), ("vi",), ("en",), ("zh-cn", "zh-tw"), ("ja",)]


def langdetect_prob(text: str, codes: tuple[str, ...], max_chars: int = 600) -> float | None:
    """The check computed through langdetect's own Detector (as language_prob did before)."""
    probs = language_id.langdetect_probabilities(text[:max_chars], max_chars)
    return None if probs is None else sum(p for lang, p in probs if lang in codes)


def assert_same(text: str, max_chars: int = 600, codes_list=CODES) -> None:
    language_id.prepare()
    text = text[:max_chars]
    assert (language_id.probabilities(text, max_chars, language_id._profiles)
            == language_id.langdetect_probabilities(text, max_chars))
    for codes in codes_list:
        ours = language_id.language_prob(text, codes, max_chars)
        theirs = langdetect_prob(text, codes, max_chars)
        assert ours == theirs and type(ours) is type(theirs), (text[:40], codes, ours, theirs)


def test_reference_is_langdetects_public_api():
    """The reference the other tests compare with is langdetect itself (detect_langs: max 10000)."""
    DetectorFactory.seed = 0
    for text in TEXTS.values():
        try:
            want = [(found.lang, found.prob) for found in detect_langs(text)]
        except LangDetectException:
            want = None
        assert language_id.langdetect_probabilities(text, 10_000) == want


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_bit_identical_to_langdetect_in_every_script(name):
    for max_chars in (600, 25, 5000):
        assert_same(TEXTS[name], max_chars)


@pytest.mark.slow
def test_bit_identical_on_short_windows():
    """Short pieces leave langdetect unsure (uk/mk/bg, ru/bg, …): probabilities far from 0 and
    1, where any change in the order of float operations shows in the last bits."""
    uncertain = 0
    for name in ("uk", "ru", "mixed", "el", "vi", "ro", "hu", "bn", "ar"):
        text = TEXTS[name]
        for start in range(0, len(text) - 10, 6):
            for max_chars in (14, 37):
                assert_same(text[start:], max_chars, codes_list=[("uk",), ("en",)])
                probs = language_id.probabilities(text[start:start + max_chars], max_chars,
                                                  language_id._profiles)
                uncertain += bool(probs) and probs[0][1] < 0.9
    assert uncertain >= 20


def test_cases_cover_undecidable_and_uncertain_texts():
    """The texts above reach every outcome: None, probabilities strictly between 0 and 1."""
    language_id.prepare()
    assert language_id.language_prob(TEXTS["no-letters"], ("uk",)) is None
    assert language_id.language_prob(TEXTS["url-only"], ("uk",)) is not None  # "Київ" is left
    probs = [language_id.language_prob(t, ("uk",)) for t in TEXTS.values()]
    assert any(p is not None and 0.1 < p < 0.999 for p in probs)
    assert language_id.language_prob(TEXTS["uk"], ("uk",)) > 0.99
    assert language_id.language_prob(TEXTS["uk"], ("en",)) == 0


def test_long_documents_and_truncation():
    text = " ".join(TEXTS[k] for k in ("uk", "ru", "en", "vi", "hi", "ja")) * 3
    for max_chars in (1, 100, 600, 601, 2000):
        assert_same(text, max_chars)
    assert_same(text[::-1], 600)


def test_results_do_not_depend_on_the_word_cache(monkeypatch):
    language_id.prepare()
    before = [language_id.language_prob(t, ("uk",)) for t in TEXTS.values()]
    monkeypatch.setattr(language_id, "_WORD_CACHE_LIMIT", 1)  # cleared at nearly every word
    assert [language_id.language_prob(t, ("uk",)) for t in TEXTS.values()] == before


def test_prepare_fixes_the_seed_and_loads_profiles_once():
    DetectorFactory.seed = None
    language_id.prepare()
    profiles = language_id._profiles
    language_id.prepare()
    assert DetectorFactory.seed == 0 and language_id._profiles is profiles
    assert len(profiles.langs) == 55 and profiles.matrix.shape == (len(profiles.rows), 55)


@pytest.mark.slow
def test_profiles_cache_is_written_read_and_rebuilt_when_damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = language_id.load_profiles()
    cached = list((tmp_path / "wiki2bert").glob("langdetect-profiles-*.npz"))
    assert len(cached) == 1

    def not_again():
        raise AssertionError("the profiles were rebuilt although the cache is good")

    with monkeypatch.context() as m:
        m.setattr(language_id, "profiles_from_langdetect", not_again)
        loaded = language_id.load_profiles()
    assert loaded.langs == built.langs and loaded.rows == built.rows
    assert np.array_equal(loaded.matrix, built.matrix)
    text = TEXTS["mixed"]
    assert language_id.probabilities(text, 600, loaded) == language_id.langdetect_probabilities(text, 600)

    good = cached[0].read_bytes()
    for damaged in (b"not a numpy file", good[: len(good) // 2], good[:-300]):
        cached[0].write_bytes(damaged)
        assert language_id.load_profiles().rows == built.rows     # rebuilt, and rewritten
        assert cached[0].read_bytes() == good


def test_profiles_load_without_a_writable_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file: no cache folder can be made
    profiles = language_id.load_profiles()
    assert profiles.langs == tuple(detector_factory_langs())


def detector_factory_langs() -> list[str]:
    detector_factory.init_factory()
    return detector_factory._factory.get_lang_list()


def wikitext_paragraphs(dump, count: int) -> list[str]:
    """The first `count` paragraphs of raw wikitext (markup, URLs, templates and all)."""
    with lzma.open(dump, "rt", encoding="utf-8") as fh:
        text = fh.read(3_000_000)
    paragraphs = [p.strip() for p in text.split("\n\n")]
    return [p for p in paragraphs if len(p) > 40][:count]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["uk", "vi"])
def test_bit_identical_on_real_wikipedia_text(shared_data, lang):
    paragraphs = wikitext_paragraphs(shared_data / f"{lang}wiki.xml.xz", 300)
    assert len(paragraphs) == 300
    language_id.prepare()
    for text in paragraphs:
        assert language_id.language_prob(text, (lang,)) == langdetect_prob(text, (lang,)), text[:80]


def test_many_at_a_time_gives_the_same_numbers():
    """language_probs (texts detected in blocks) = language_prob of each text, to the bit,
    whatever the block size; short windows included, where the last bits show."""
    language_id.prepare()
    texts = list(TEXTS.values())
    texts += [TEXTS[name][start:start + 37] for name in ("uk", "ru", "mixed", "vi", "el")
              for start in range(0, len(TEXTS[name]) - 10, 9)]
    for codes in (("uk",), ("en",), ("zh-cn", "zh-tw")):
        want = [language_id.language_prob(t, codes) for t in texts]
        assert any(p is not None and 0.1 < p < 0.999 for p in want)
        for batch in (1, 5, 64):
            assert language_id.language_probs(texts, codes, batch=batch) == want
