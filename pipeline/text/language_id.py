"""The language check of the filter: langdetect with a fixed seed, for the 55 languages it knows.

langdetect guesses among its own 55 languages only (it calls Armenian Estonian), so for any
other language the check must be skipped, never applied.

Usage:
    codes = langdetect_codes("uk")          # ("uk",), or None when langdetect does not know it
    prepare()                                # seed 0 and load the profiles (once per process)
    language_prob("Текст статті ...", codes) # probability of the language, None if undecidable
"""
from __future__ import annotations

LANGDETECT_LANGS = frozenset(
    "af ar bg bn ca cs cy da de el en es et fa fi fr gu he hi hr hu id it ja kn ko lt lv mk ml "
    "mr ne nl no pa pl pt ro ru sk sl so sq sv sw ta te th tl tr uk ur vi zh-cn zh-tw".split()
)
# Wikipedia codes whose langdetect name differs.
_WIKI_ALIASES = {"zh": ("zh-cn", "zh-tw"), "simple": ("en",), "nb": ("no",)}


def langdetect_codes(lang: str) -> tuple[str, ...] | None:
    if lang in _WIKI_ALIASES:
        return _WIKI_ALIASES[lang]
    return (lang,) if lang in LANGDETECT_LANGS else None


def prepare() -> None:
    """Fix langdetect's seed and load its profiles (before forking workers, so they share them)."""
    from langdetect import DetectorFactory, detector_factory

    DetectorFactory.seed = 0
    if detector_factory._factory is None:
        detector_factory.init_factory()


def language_prob(text: str, codes: tuple[str, ...], max_chars: int = 600) -> float | None:
    """langdetect's probability that `text` (its first `max_chars` characters) is in `codes`."""
    from langdetect import detector_factory
    from langdetect.lang_detect_exception import LangDetectException

    prepare()
    det = detector_factory._factory.create()
    det.set_max_text_length(max_chars)
    det.append(text[:max_chars])
    try:
        probs = det.get_probabilities()
    except LangDetectException:
        return None  # no letters langdetect can use: nothing to decide
    return sum(p.prob for p in probs if p.lang in codes)
