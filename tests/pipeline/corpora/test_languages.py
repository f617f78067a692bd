"""A Wikipedia's code to a corpus's own language code, for every Wikipedia: macrolanguages folded
(Chinese, Arabic, Persian, Malay, Estonian are individual languages in FineWeb-2), the script
breaking ties, Wikipedia's irregular codes; the nearest languages; an unknown code in one line."""
from __future__ import annotations

import pytest

from pipeline.core.errors import StageError
from pipeline.corpora.languages import corpus_tag, match_language, nearest_languages, wiki_tag
from pipeline.text.wikipedias import _table

# FineWeb-2's folder names (GlotLID's labels) of the cases below, and some neighbours
FINEWEB2 = ["hun_Latn", "fin_Latn", "srp_Cyrl", "srp_Latn", "hbs_Latn", "hrv_Latn", "bos_Latn", "cmn_Hani",
            "yue_Hani", "lzh_Hani", "nan_Latn", "kor_Hang", "jpn_Jpan", "pes_Arab", "prs_Arab", "nob_Latn",
            "nno_Latn", "als_Latn", "gsw_Latn", "pbt_Arab", "arb_Arab", "ary_Arab", "zsm_Latn", "ind_Latn",
            "ukr_Cyrl", "rus_Cyrl", "vie_Latn", "tgl_Latn", "ekk_Latn", "bel_Cyrl", "sco_Latn", "tha_Thai",
            "khk_Cyrl", "npi_Deva", "swh_Latn", "lvs_Latn", "kmr_Latn", "ydd_Hebr", "sgs_Latn"]


@pytest.mark.parametrize("lang, code", [
    ("hu", "hun_Latn"), ("uk", "ukr_Cyrl"), ("vi", "vie_Latn"), ("th", "tha_Thai"),
    ("zh", "cmn_Hani"), ("ar", "arb_Arab"), ("fa", "pes_Arab"), ("ms", "zsm_Latn"), ("et", "ekk_Latn"),
    ("lv", "lvs_Latn"), ("sw", "swh_Latn"), ("mn", "khk_Cyrl"), ("ne", "npi_Deva"), ("ku", "kmr_Latn"),
    ("yi", "ydd_Hebr"), ("ps", "pbt_Arab"), ("tl", "tgl_Latn"), ("ko", "kor_Hang"), ("ja", "jpn_Jpan"),
    ("sr", "srp_Cyrl"), ("sh", "hbs_Latn"), ("hr", "hrv_Latn"), ("no", "nob_Latn"), ("nn", "nno_Latn"),
    ("sq", "als_Latn"), ("als", "gsw_Latn"), ("zh-yue", "yue_Hani"), ("zh-classical", "lzh_Hani"),
    ("zh-min-nan", "nan_Latn"), ("be-tarask", "bel_Cyrl"), ("bat-smg", "sgs_Latn"), ("simple", ""),
    ("de", ""),
])
def test_a_wikipedias_code_finds_the_corpus_language(lang, code):
    assert match_language(lang, FINEWEB2, "iso639-3_Script") == code


def test_bcp47_corpora_and_the_script_of_the_wikipedia():
    assert match_language("sr", ["sr_Latn", "sr", "hr"], "bcp47") == "sr"
    assert match_language("hu", ["hu", "fi"], "bcp47") == "hu"
    assert match_language("zh", ["zh", "zh_Latn"], "bcp47") == "zh"


def test_every_wikipedia_code_has_a_tag():
    for code in _table():
        assert wiki_tag(code)


def test_nearest_languages_put_related_languages_first():
    assert nearest_languages(wiki_tag("nb"), ["hun_Latn", "nno_Latn", "fin_Latn"], "iso639-3_Script")[0] == "nno_Latn"
    assert nearest_languages(wiki_tag("sr"), FINEWEB2, "iso639-3_Script", 3) == ["srp_Cyrl", "srp_Latn", "hbs_Latn"]
    assert nearest_languages(corpus_tag("ukr_Cyrl"), ["rus_Cyrl", "hun_Latn"], "iso639-3_Script") == [
        "rus_Cyrl", "hun_Latn"]


def test_an_unknown_language_is_one_line_with_the_close_codes():
    with pytest.raises(StageError, match=r"--lang hux-q: not a Wikipedia's code nor a language tag .close: hu"):
        wiki_tag("hux-q")
