"""A Wikipedia dump's date, worked out one way for both cards that say it: the model card
(trainer/export/card.py) and the dataset card of `pipeline export` (pipeline/core/dataset_card.py),
which said "dated unknown" for the dump whose model card gave its date (issue 60).

    dump_date("ukwiki-20230501-pages-articles.xml.bz2")                    # "2023-05-01"
    dump_date("ukwiki.xml.xz", newest_revision="2023-05-01T12:08:16Z")     # "2023-05-01, its newest revision"
    dump_date("ukwiki.xml.xz")                                             # "unknown"

In order: the date `pipeline download` fetched (its --date, not "latest"), the date in the
dump's file name (Wikimedia's names carry it), else, for a dump renamed, the newest revision in
it, which `pipeline extract` records. Always YYYY-MM-DD.
"""
from __future__ import annotations

import re

_DAY = re.compile(r"(?<!\d)(20\d{2})(\d{2})(\d{2})(?!\d)")
UNKNOWN = "unknown"


def _day(text: str | None) -> str | None:
    m = _DAY.search(text or "")
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None


def dump_date(name: str | None, fetched: str | None = None, newest_revision: str | None = None) -> str:
    """See the module docstring. `name`: the dump's file name (or path); `fetched`: download's
    date; `newest_revision`: extract's newest revision timestamp."""
    known = _day(fetched if fetched != "latest" else None) or _day(name)
    if known:
        return known
    if newest_revision and re.match(r"\d{4}-\d{2}-\d{2}", newest_revision):
        return f"{newest_revision[:10]}, its newest revision"
    return UNKNOWN
