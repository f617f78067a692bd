"""A Wikipedia's code -> a corpus's own name for the language: FineWeb-2's `hun_Latn` (ISO 639-3
and script), MADLAD-400's `hu` (BCP-47), found among the folders the corpus actually has.

langcodes does the work: every code is standardised with its macrolanguages folded in (`cmn`
-> `zh`, `arb` -> `ar`, `ekk` -> `et`, `nob` -> `nb`), so a Wikipedia's code and a corpus's
individual language meet; the script breaks a tie (Serbian's Wikipedia is Cyrillic: `srp_Cyrl`
before `srp_Latn`), with Han and Korean written as the corpora write them (`Hani`, `Hang`).
Wikipedia's codes that are not the language's tag are a table here (`als` is Alemannic on
Wikipedia but Tosk Albanian in ISO 639-3; `simple` is English; `no` is Bokmål).

Usage:
    wiki_tag("zh-min-nan")                       # "nan"; StageError with the close codes if unknown
    match_language("hu", ["hun_Latn", "fin_Latn"], "iso639-3_Script")   # "hun_Latn" ("" if none)
    nearest_languages(wiki_tag("en"), codes, "iso639-3_Script")   # the corpus's closest, for the error line
"""
from __future__ import annotations

import langcodes

from pipeline.core.errors import StageError
from pipeline.text.wikipedias import close_codes, edit_distance, is_wikipedia

# Wikipedia's codes whose language is another tag (subdomain -> BCP-47 / ISO 639-3)
WIKI_CODES = {
    "simple": "en", "no": "nb", "sh": "hbs", "als": "gsw", "bat-smg": "sgs", "be-tarask": "be",
    "be-x-old": "be", "cbk-zam": "cbk", "eml": "egl", "fiu-vro": "vro", "map-bms": "jv",
    "nds-nl": "nds", "roa-rup": "rup", "roa-tara": "nap", "zh-classical": "lzh",
    "zh-min-nan": "nan", "zh-yue": "yue", "nrm": "nrf", "bh": "bho", "mo": "ro",
}
# Macrolanguages whose members langcodes does not fold back (corpora label the member)
MEMBERS = {"ps": ("pbt", "pst", "pbu")}
# Scripts a corpus may name otherwise than langcodes' likely script for the language
SAME_SCRIPT = ({"Hani", "Hans", "Hant"}, {"Hang", "Kore"}, {"Jpan", "Hira", "Kana"})


def _key(code: str) -> str:
    return code.strip().lower().replace("_", "-")


def wiki_tag(lang: str) -> str:
    """The language tag of a Wikipedia code (or of any tag langcodes knows); StageError naming
    the close Wikipedia codes for a code that is neither."""
    key = _key(lang)
    if key in WIKI_CODES:
        return WIKI_CODES[key]
    try:
        tag = langcodes.standardize_tag(key, macro=True)
        if langcodes.Language.get(tag).is_valid():
            return tag
    except ValueError:
        pass
    if is_wikipedia(key):   # a Wikipedia whose code langcodes does not know (rsk): as it is
        return key
    close = close_codes(key, n=3)
    raise StageError(f"--lang {lang}: not a Wikipedia's code nor a language tag"
                     f"{' (close: ' + ', '.join(close) + ')' if close else ''}: check --lang")


def corpus_tag(code: str) -> str:
    """A corpus's language code as a BCP-47 tag: `hun_Latn` -> `hun-Latn`, `sr_Latn` -> `sr-Latn`."""
    return code.replace("_", "-")


def _parts(tag: str, explicit_script: bool) -> tuple[str, str, bool, str]:
    """(language after folding macrolanguages, script, has a region, ISO 639-3 code) of a tag."""
    try:
        lang = langcodes.Language.get(langcodes.standardize_tag(tag, macro=True))
    except ValueError:
        base = tag.split("-")[0].lower()
        return base, "", False, base
    raw = tag.split("-")[0].lower()
    script = lang.script or ("" if explicit_script else (lang.maximize().script or ""))
    try:
        alpha3 = langcodes.Language.get(raw).to_alpha3() if len(raw) < 3 else raw
    except LookupError:
        alpha3 = raw
    return lang.language or raw, script, bool(lang.territory), alpha3


def _same_script(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in SAME_SCRIPT)


def match_language(lang: str, codes, style: str) -> str:
    """The corpus code (one of `codes`) of Wikipedia code `lang`, "" when the corpus has none:
    same language (macrolanguages folded), then the same script, then the language's own code,
    then no region."""
    tag = wiki_tag(lang)
    w_lang, w_script, _, w_alpha3 = _parts(tag, explicit_script=False)
    members = MEMBERS.get(w_lang, ())
    best = None
    for code in codes:
        c_lang, c_script, c_region, c_alpha3 = _parts(corpus_tag(code), style != "bcp47")
        if c_lang != w_lang and c_alpha3 not in (w_alpha3, *members):
            continue
        if not c_script and style == "bcp47":
            c_script = _parts(corpus_tag(code), explicit_script=False)[1]
        rank = (not _same_script(w_script, c_script), c_alpha3 != w_alpha3, c_region, code)
        best = min(best, rank) if best else rank
    return best[-1] if best else ""


def nearest_languages(tag: str, codes, style: str, n: int = 5) -> list[str]:
    """The corpus codes nearest to language `tag` (wiki_tag's, or a corpus's code as corpus_tag
    writes it): langcodes' distance (related languages, other scripts of the language), then
    the same script, then the code's spelling."""
    w_lang, w_script, _, w_alpha3 = _parts(tag, explicit_script=False)

    def score(code: str):
        c_tag = corpus_tag(code)
        try:
            distance = langcodes.tag_distance(tag, c_tag)
        except ValueError:
            distance = 1000
        c_lang, c_script, _, c_alpha3 = _parts(c_tag, style != "bcp47")
        return (distance, not _same_script(w_script, c_script), edit_distance(w_alpha3, c_alpha3), code)

    return [code for *_, code in sorted(score(c) for c in codes)[:n]]

