"""The runs and fine-tuning results a report showed, kept in the page itself, so that the next
report of the same page (a rerun of `make corpus`, `pipeline run`) shows them again.

Usage:
    runs, downstream = remembered(Path("data/uk/report.html"))      # ([], []) for no page
    page = with_inputs(page, runs, downstream)                       # before </body>

`pipeline report --run R --downstream D` writes their absolute paths into a JSON <script>
element of the page; a later report without them reads the element back and shows those that
still exist (`--forget-runs` starts again from none).
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

ELEMENT_ID = "wiki2bert-report-inputs"
_FOUND = re.compile(rf'<script type="application/json" id="{ELEMENT_ID}">(.*?)</script>', re.S)


def remembered(page: Path) -> tuple[list[Path], list[Path]]:
    """(runs, downstream) recorded in an earlier `page`; empty where there is none."""
    try:
        found = _FOUND.search(page.read_text(encoding="utf-8"))
        data = json.loads(html.unescape(found.group(1))) if found else {}
    except (OSError, UnicodeDecodeError, ValueError):
        return [], []
    return ([Path(p) for p in data.get("runs", []) if isinstance(p, str)],
            [Path(p) for p in data.get("downstream", []) if isinstance(p, str)])


def merged(given: list[Path], earlier: list[Path]) -> list[Path]:
    """Earlier paths that still exist, then the given ones; each once (by absolute path)."""
    out: dict[str, Path] = {}
    for path in [p for p in earlier if p.exists()] + list(given):
        out.setdefault(str(Path(path).resolve()), Path(path))
    return list(out.values())


def with_inputs(page: str, runs, downstream) -> str:
    """The page with its runs and downstream results recorded (absolute paths)."""
    data = {"runs": [str(Path(r).resolve()) for r in runs],
            "downstream": [str(Path(d).resolve()) for d in downstream]}
    element = (f'<script type="application/json" id="{ELEMENT_ID}">'
               f"{html.escape(json.dumps(data), quote=False)}</script>")
    return page.replace("</body>", element + "\n</body>", 1)
