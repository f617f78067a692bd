"""Per-language settings of the split and filter stages.

`pipeline/text/languages/{lang}.json` may hold a "splitter" section (abbreviations, ordinal_dot,
extra_terminators, single_letter_words, sentence_final) and a "filter" section (alphabet and
threshold defaults); anything it
leaves out comes from the generic defaults here, so every Wikipedia language works without
a file of its own. A top-level "word_segmenter" names the word segmenter of a script written
without spaces (vocab/core/segmenters.py: mecab, jieba, pythainlp); none when absent.

Usage:
    settings = language_settings("uk")
    settings["splitter"]["abbreviations"], settings["filter"].get("alphabet")
    word_segmenter("ja")            # "mecab"; word_segmenter("ja", "none") -> None
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

LANG_DIR = Path(__file__).with_name("languages")

# Languages that write ordinal numbers with a dot ("5. május", "am 3. Oktober").
ORDINAL_DOT_LANGS = {
    "hu", "de", "als", "bar", "fi", "da", "no", "nn", "cs", "sk", "sl", "hr", "sr", "bs",
    "sh", "tr", "lv", "is", "et", "fo", "se", "hsb", "dsb", "lb",
}

# Abbreviations common to Latin-script Wikipedias (cheap, safe: they rarely end sentences).
COMMON_ABBREVIATIONS = [
    "e.g", "i.e", "al", "vs", "ca", "cf", "approx", "Mr", "Mrs", "Ms", "Dr", "Prof", "Jr",
    "Sr", "St", "Mt", "No", "Nr", "Vol", "pp", "Fig", "Inc", "Ltd", "Bros", "Gen", "Col",
    "Lt", "Capt", "Sgt", "Rev", "Hon", "Gov", "Sen", "Rep", "Jan", "Feb", "Aug", "Sept",
    "Oct", "Nov", "Dec",
]

# Greek ";" is the question mark (U+037E becomes ";" under NFC).
EXTRA_TERMINATORS = {"el": ";"}


def _generic(lang: str) -> dict:
    return {
        "splitter": {
            "abbreviations": list(COMMON_ABBREVIATIONS),
            "ordinal_dot": lang in ORDINAL_DOT_LANGS,
            "extra_terminators": EXTRA_TERMINATORS.get(lang, ""),
        },
        "filter": {},
        "word_segmenter": None,
    }


@lru_cache(maxsize=64)
def language_settings(lang: str) -> dict:
    """Generic defaults for `lang`, updated by pipeline/text/languages/{lang}.json when it exists."""
    settings = _generic(lang)
    path = LANG_DIR / f"{lang}.json"
    if path.is_file():
        with open(path, encoding="utf-8") as fh:
            own = json.load(fh)
        for section in ("splitter", "filter"):
            own_section = dict(own.get(section, {}))
            if section == "splitter" and "abbreviations" in own_section:
                own_section["abbreviations"] = (settings["splitter"]["abbreviations"]
                                                + list(own_section["abbreviations"]))
            settings[section].update(own_section)
        settings["word_segmenter"] = own.get("word_segmenter")
    return settings



def word_segmenter(lang: str, option: str | None = None) -> str | None:
    """The word segmenter to use for `lang`: `option` (a --word-segmenter value) when given,
    else the language's own; None for none (the CLI checks names against vocab.core.segmenters)."""
    name = option if option is not None else (language_settings(lang)["word_segmenter"] or "none")
    return None if name == "none" else name
