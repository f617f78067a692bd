"""Wikitext rewritten before wikiextractor, so that what a reader sees in a sentence stays in it.

wikiextractor (with templates not expanded) drops every template, and drops a link whose
target has a `prefix:` together with its label. Both lose visible text and leave holes
("小説「」の中で", "連邦会議（）で"). Three rewrites fix that, on the page's wikitext:

- Inline templates whose output is (mostly) one of their arguments become that text; every
  other template goes, as before. The kinds, each recognised by its name on any wiki (the
  names are in TEMPLATE_KINDS and docs/text_rules.md):
    interlanguage links  {{ill|Name|de|Name}} {{仮リンク|名前|en|Name}} {{нп|Назва|текст|en|Name}}
                         -> lt=/text= if given, else the display argument, else the first
    language, script     {{lang|de|Donau}} {{lang-uk|Київ}} {{langx|..}} {{transl|ru|Moskva}}
                         {{IPA|/k/}} -> the text argument (codes skipped)
    inline formatting    {{nowrap|..}} {{small|..}} {{abbr|NASA|..}} {{ruby|漢字|かんじ}} -> the first
    numbers and units    {{convert|5|km|mi}} -> "5 km", {{convert|1|to|5|km}} -> "1–5 km",
                         {{nts|1234}} {{formatnum:1234}} {{val|1.5|u=m}} {{число|5|км}}
    characters           {{nbsp}} {{ndash}} {{mdash}} {{snd}} {{!}} {{•}} {{·}} ...
  Templates are rewritten innermost first, so {{nowrap|{{lang|ru|Москва}}}} gives "Москва".
- A link whose target has a colon keeps its label: [[:en:Foo|Bar]], [[Star Wars: Episode I|…]]
  and [[wikt:слово|слово]] give their labels; [[:en:Foo]] gives "Foo". File, image and category
  links (the wiki's local names too) and the sidebar's language links ([[en:Foo]]) stay as
  they were, for wikiextractor to drop.
- Bold and italic quotes ('' ''' ''''') go: a reader sees italics, not the quote marks that
  wikiextractor would put in their place.

<math>, <nowiki>, <pre>, <code>, <syntaxhighlight>, <source>, <score> and comments are left
untouched. Usage:
    rewrite = WikitextRewriter(skip_prefixes={"File", "Category", "Файл", "Категорія"})
    rewrite("{{lang|de|Donau}} [[:en:Danube|Donau]]")   # "Donau Donau"
"""
from __future__ import annotations

import re

# -- template kinds ------------------------------------------------------------------------------
# Names are compared in lower case with "_" as " ". Lists hold names in use on many wikis; a
# name pattern (PATTERNS) catches whole families (lang-xx, ...).
INTERLANGUAGE = {
    "ill", "ill2", "illm", "ill-wd", "illwd", "interlanguage link", "interlanguage link multi",
    "interlanguage link forced", "link-interwiki", "iw", "iw2", "lien", "仮リンク", "ill-ja", "нп",
    "нп3", "нп4", "нп5", "не переведено", "не переведено 3", "не переведено 4", "не переведено 5",
    "не перекладено", "interwiki link", "illp", "ill-t", "ilh",
}
LANGUAGE = {
    "lang", "langx", "transl", "transliteration", "translit", "script", "ipa", "ipa2", "iast",
    "audio", "lang-rtl", "rtl-lang", "ltr", "rtl", "polytonic", "hebrew", "arabic", "unicode",
    "coptic", "armenian", "cjk", "zh-t", "zh-s", "jpn", "kor", "vie", "tiếng", "lang-ja",
}
FORMATTING = {
    "nowrap", "nobr", "nobreak", "nowrap begin", "small", "smaller", "big", "larger", "sup", "sub",
    "em", "strong", "smallcaps", "sc", "sc1", "sc2", "abbr", "abbrlink", "ruby", "resize", "bigger",
    "huge", "font", "nihongo", "nihongo2", "nihongo3", "linktext", "nowrap2", "неразрывно", "nobr2",
    "mvar", "math", "var", "serif", "sans-serif", "monospace", "mono", "kbd", "code", "tt",
    "underline", "strikethrough", "overline", "italic", "bold", "colored", "color", "highlight",
}
NUMBER = {
    "convert", "cvt", "nts", "ntsh", "nts-", "formatnum", "val", "num", "number", "число", "num2",
    "sortnum", "formatnumber", "rnd", "round", "fmtn",
}
CHARACTERS = {
    "nbsp": " ", "spaces": " ", "space": " ", "thinsp": " ", "nnbsp": " ", "sp": " ",
    "ndash": "–", "mdash": "—", "snd": " – ", "spnd": " – ", "sndash": " – ", "spaced ndash": " – ",
    "spaced en dash": " – ", "dash": " — ", "--": "—", "—": " — ", "-": "", "clear": "",
    "!": "|", "=": "=", "!!": "||", "'": "'", "\"": "\"", "' \"": "'\"", "okina": "ʻ", "`": "`",
    "•": " • ", "·": " · ", "bull": " • ", "dot": " · ", "middot": "·", "pipe": "|", "·w": " · ",
    "minus": "−", "times": "×", "x": "×", "plusminus": "±", "pm": "±", "degree": "°", "deg": "°",
    "prime": "′", "pprime": "″", "nbhyph": "‑", "shy": "", "wbr": "", "zwsp": "", "&": "&",
    "tiret": "—", "тире": " — ", "снд": " — ", "разрыв": "",
}
PATTERNS = [
    (re.compile(r"^(?:lang|langx|lang2|transl|ipa|script|lang-rtl)[- ][\w-]+$"), "language"),
    (re.compile(r"^(?:ill|interlanguage link|нп|не переведено)\b.*$"), "interlanguage"),
]
NAMED_DISPLAY = ("lt", "text", "texte", "label", "display", "testo", "texto", "tekst", "текст")
RANGE_WORDS = {"-", "–", "to", "and", "and(-)", "or", "by", "x", "×", "+", "+/-", "±", "&", "—"}
_CODE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$"
                   r"|^(?:ALA|ALA-LC|ISO|DIN|BGN|UN|Latn|Cyrl|Grek|Arab|Hani|Hans|Hant|Jpan|Kore)$")
_UNIT_POWER = re.compile(r"(?<=[a-zA-Zμ])([23])$")


def template_kind(name: str) -> str | None:
    if name in INTERLANGUAGE:
        return "interlanguage"
    if name in LANGUAGE:
        return "language"
    if name in FORMATTING:
        return "formatting"
    if name in NUMBER:
        return "number"
    if name in CHARACTERS:
        return "characters"
    for pattern, kind in PATTERNS:
        if pattern.match(name):
            return kind
    return None


def split_arguments(inner: str) -> list[str]:
    """Split a template's inside on "|", not inside [[links|labels]]."""
    if "[[" not in inner:
        return inner.split("|")
    parts, depth, start, i, n = [], 0, 0, 0, len(inner)
    while i < n:
        two = inner[i:i + 2]
        if two == "[[":
            depth += 1
            i += 2
            continue
        if two == "]]" and depth:
            depth -= 1
            i += 2
            continue
        if inner[i] == "|" and not depth:
            parts.append(inner[start:i])
            start = i + 1
        i += 1
    parts.append(inner[start:])
    return parts


def _arguments(parts: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, named = [], {}
    for p in parts:
        key, eq, value = p.partition("=")
        if eq and "[[" not in key and key.strip() and not key.strip().isdigit() and len(key) < 30:
            named[key.strip().lower()] = value.strip()
        elif eq and key.strip().isdigit():
            index = int(key.strip()) - 1
            while len(positional) <= index:
                positional.append("")
            positional[index] = value.strip()
        else:
            positional.append(p.strip())
    return positional, named


def _unit(unit: str) -> str:
    return _UNIT_POWER.sub(lambda m: "²" if m.group(1) == "2" else "³", unit)


def template_text(name: str, kind: str, positional: list[str], named: dict[str, str]) -> str:
    """The visible text of an inline template of `kind` (see the module docstring)."""
    if kind == "characters":
        return CHARACTERS[name]
    if kind == "interlanguage":
        for key in NAMED_DISPLAY:
            if named.get(key):
                return named[key]
        if len(positional) > 1 and positional[1] and not _CODE.match(positional[1]):
            return positional[1]
        return positional[0] if positional else ""
    if kind == "language":
        texts = [p for p in positional if p and not _CODE.match(p)]
        return texts[0] if texts else ""
    if kind == "formatting":
        return next((p for p in positional if p), "")
    # numbers and units: value [range word value] [unit]
    values = [p for p in positional if p]
    if not values:
        return ""
    if len(values) >= 3 and values[1].lower() in RANGE_WORDS:
        joiner = "–" if values[1] in ("-", "–", "to") else f" {values[1]} "
        text = values[0] + joiner + values[2]
        unit = values[3] if len(values) > 3 else ""
    else:
        text = values[0]
        unit = values[1] if len(values) > 1 else named.get("u") or named.get("ul") or ""
    if unit and not unit[0].isdigit() and "=" not in unit:
        text += " " + _unit(unit)
    return text


_TEMPLATE = re.compile(r"\{\{(?!\{)([^{}]*)\}\}")
_PROTECTED = re.compile(r"<!--.*?-->|<(math|nowiki|pre|code|syntaxhighlight|source|score|chem|ce)\b[^>]*?"
                        r"(?:/>|>.*?</\1\s*>)", re.S | re.I)
_LINK = re.compile(r"\[\[([^\[\]|]*:[^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_EMPHASIS = re.compile(r"'{2,}")
_MEDIA_FILE = re.compile(r"\.(?:jpe?g|png|svg|gif|tiff?|webp|ogg|ogv|oga|webm|pdf|djvu|mp3|wav|flac|midi?)$", re.I)
_SIDEBAR_LANG = re.compile(r"^[a-z]{2,3}(?:-[a-z]{2,8})*$")


def map_unprotected(text: str, func) -> str:
    """`text` with func() applied to each stretch outside comments, <math>, <nowiki>, ...;
    those are left as they are."""
    if "<" not in text:
        return func(text)
    out, pos = [], 0
    for m in _PROTECTED.finditer(text):
        out.append(func(text[pos:m.start()]))
        out.append(m.group())
        pos = m.end()
    out.append(func(text[pos:]))
    return "".join(out)


class WikitextRewriter:
    """The three rewrites of the module docstring, for one wiki (its namespace names)."""

    def __init__(self, skip_prefixes=(), template_prefix: str = "Template:"):
        # File, image and category namespaces, and "Media": links wikiextractor drops.
        self.skip_prefixes = {p.lower() for p in skip_prefixes} | {"file", "image", "category", "media"}
        self.template_prefixes = {"template:", template_prefix.lower(), "subst:", "safesubst:", "msg:"}
        names = "|".join(re.escape(p) for p in sorted(self.skip_prefixes, key=len, reverse=True))
        self._media_link = re.compile(r"\[\[\s*(?:" + names + r")\s*:", re.I)

    def __call__(self, text: str) -> str:
        return map_unprotected(text, self._rewrite)

    def _rewrite(self, text: str) -> str:
        if "[[" in text:
            text = self._drop_unclosed_media(text)
        if "{{" in text:
            for _ in range(12):  # nesting depth; deeper leftovers go to wikiextractor
                new = _TEMPLATE.sub(self._template, text)
                if new == text:
                    break
                text = new
        if ":" in text and "[[" in text:
            text = _LINK.sub(self._link, text)
        if "''" in text:
            text = _EMPHASIS.sub(_emphasis, text)
        return text

    def _drop_unclosed_media(self, text: str) -> str:
        """A file link whose "]]" is missing ends at its paragraph, as MediaWiki renders it;
        left open, wikiextractor would drop the rest of the article with it."""
        pos = 0
        while True:
            m = self._media_link.search(text, pos)
            if m is None:
                return text
            end = _link_end(text, m.start())
            if end is None:
                stop = text.find("\n\n", m.start())
                text = text[:m.start()] + (text[stop:] if stop >= 0 else "")
                end = m.start()
            pos = end

    def _template(self, m: re.Match) -> str:

        parts = split_arguments(m.group(1))
        head = parts[0].strip().replace("_", " ")
        lowered = head.lower()
        for prefix in self.template_prefixes:
            if lowered.startswith(prefix):
                lowered = lowered[len(prefix):].strip()
        if ":" in lowered and not lowered.startswith("#"):  # {{formatnum:1234}}, {{lc:ABC}}
            func, _, value = head.partition(":")
            func = func.strip().lower()
            if func in ("formatnum", "lc", "uc", "lcfirst", "ucfirst"):
                return _case(func, value.strip())
            return ""
        kind = template_kind(lowered)
        if kind is None:
            return ""
        positional, named = _arguments(parts[1:])
        return template_text(lowered, kind, positional, named)

    def _link(self, m: re.Match) -> str:
        target, label = m.group(1), m.group(2)
        leading = target.startswith(":")
        prefix = target.lstrip(":").split(":", 1)[0].strip().lower()
        if (prefix in self.skip_prefixes or _MEDIA_FILE.search(target.strip())) and not leading:
            return m.group()  # a file (also under a namespace alias: "Hình:") or a category
        if not leading and label is None and _SIDEBAR_LANG.match(prefix):
            return ""  # [[en:Foo]]: the sidebar's language link, not in the text
        if label is not None and label.strip():
            return label
        shown = target.lstrip(":")
        if leading and (prefix in self.skip_prefixes or _SIDEBAR_LANG.match(prefix)):
            shown = shown.split(":", 1)[1]
        return shown


_LINK_TOKEN = re.compile(r"\[\[|\]\]|\n\n")


def _link_end(text: str, start: int) -> int | None:
    """The end of the [[...]] opened at `start` (nested links counted), or None when it is not
    closed before the paragraph ends."""
    depth = 0
    for m in _LINK_TOKEN.finditer(text, start):
        token = m.group()
        if token == "[[":
            depth += 1
        elif token == "]]":
            depth -= 1
            if depth == 0:
                return m.end()
        else:
            return None
    return None


def _case(func: str, value: str) -> str:
    if func == "lc":
        return value.lower()
    if func == "uc":
        return value.upper()
    if func == "lcfirst":
        return value[:1].lower() + value[1:]
    if func == "ucfirst":
        return value[:1].upper() + value[1:]
    return value


def _emphasis(m: re.Match) -> str:
    n = len(m.group())
    if n == 4:
        return "'"  # an apostrophe before bold: l''''Odyssée'''
    return "'" * (n - 5) if n > 5 else ""
