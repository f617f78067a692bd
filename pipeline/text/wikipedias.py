"""Which --lang codes are Wikipedias, and the dump database name (dbname) of each.

Usage:
    is_wikipedia("hu"), is_wikipedia("zh_yue")      # True, True (the dbname form counts too)
    wiki_dbname("zh-min-nan"), wiki_dbname("be-tarask")   # "zh_min_nanwiki", "be_x_oldwiki"
    code_of_dbname("hywiki")                        # "hy" ("" for a dbname of no Wikipedia)
    looks_like_a_name("Hungarian")                  # True: a language's name, not a code

The list is wikipedias.txt beside this module (from meta.wikimedia.org's List of Wikipedias).
"""
from __future__ import annotations

import difflib
import functools
import re
from pathlib import Path

from pipeline.core.errors import StageError
from pipeline.core.registry import validate_lang

LIST_FILE = Path(__file__).with_name("wikipedias.txt")


def _key(code: str) -> str:
    return code.strip().lower().replace("_", "-")


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, str]:
    """{code: dbname} for every code of the list (aliases included)."""
    table = {}
    for line in LIST_FILE.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            table[_key(fields[0])] = fields[1] if len(fields) > 1 else fields[0].replace("-", "_") + "wiki"
    return table


def is_wikipedia(code: str) -> bool:
    return _key(code) in _table()


def wiki_dbname(code: str) -> str:
    """The dump's database name of `code` (a code off the list: CODE with '_' for '-', + wiki)."""
    return _table().get(_key(code)) or code.replace("-", "_") + "wiki"


def code_of_dbname(dbname: str) -> str:
    """The code of the Wikipedia whose dumps carry `dbname`, or "" if none on the list does."""
    codes = [c for c, db in _table().items() if db == dbname.strip()]
    return min(codes, key=lambda c: ("x-old" in c, len(c))) if codes else ""


def same_wiki(code: str, dbname: str) -> bool:
    """Whether a dump whose <dbname> is `dbname` is the wiki of `code`."""
    return _key(dbname) == _key(wiki_dbname(code))



def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (codes are short)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def close_codes(code: str, n: int = 1) -> list[str]:
    """The Wikipedia codes nearest to `code` (a typo's likely meaning), closest first: one edit
    away (same first letter, then one a prefix of the other, then the same length first), else difflib's nearest."""
    key, codes = _key(code), sorted(_table())
    near = sorted((c for c in codes if edit_distance(key, c) <= 1),
                  key=lambda c: (c[:1] != key[:1], not (key.startswith(c) or c.startswith(key)),
                                 abs(len(c) - len(key)), c))
    return near[:n] or difflib.get_close_matches(key, codes, n=n, cutoff=0.5)


def looks_like_a_name(lang: str) -> bool:
    """A language's name rather than a code: what no code is (capitals, spaces, accents), or
    longer than a code without a '-' (codes are 2-3 letters, or parts joined by '-': zh-min-nan)."""
    try:
        validate_lang(lang)
    except StageError:
        return True
    return not is_wikipedia(lang) and len(lang) > 3 and not re.search(r"[-_]", lang)
