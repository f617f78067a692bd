"""The whole report: every section in order, written as DATA_DIR/LANG/report.html.

Usage:
    path = write_report(Path("data/uk"), "uk", runs=[Path("runs/uk_p1")],
                        downstream=[Path("elsewhere/results.json")])
"""
from __future__ import annotations

import time
from pathlib import Path

from common.atomic import atomic_open

from .corpus import quality_section
from .downstream import downstream_section
from .funnel import funnel_section
from .hdf5 import hdf5_section
from .inputs import ReportInputs
from .joint_vocab import joint_vocab_section
from .page import render_page
from .rejections import rejections_section
from .remembered import with_inputs
from .sources import sources_section
from .training import training_section
from .vocabulary import vocab_section

REPORT_FILE = "report.html"


def build_report(lang_dir: Path, lang: str, runs=(), downstream=()) -> tuple[str, list[str]]:
    """(the page's HTML, its warnings); `downstream`: results.json files or their folders
    besides each run's downstream/."""
    data = ReportInputs.of(lang_dir)
    sections = [s for s in [
        funnel_section(data),
        sources_section(data, lang),
        rejections_section(data, lang),
        quality_section(data, lang),
        vocab_section(data, lang),
        joint_vocab_section(data, lang),
        hdf5_section(data.encodings, lang, [Path(r) for r in runs]),
        training_section([Path(r) for r in runs]),
        downstream_section([Path(r) for r in runs], [Path(d) for d in downstream]),
    ] if s is not None]
    subtitle = f"{lang_dir.resolve()} · written {time.strftime('%Y-%m-%d %H:%M')}"
    page = with_inputs(render_page(f"wiki2bert report: {lang}", subtitle, sections, lang), runs,
                       downstream)
    return page, [f"{s.id}: {w}" for s in sections for w in s.warnings]


def write_report(lang_dir: Path, lang: str, runs=(), output: Path | None = None,
                 downstream=()) -> tuple[Path, list[str]]:
    """Write the page atomically (to `output`, default LANG_DIR/report.html); (path, warnings)."""
    page, warnings = build_report(lang_dir, lang, runs, downstream)
    path = Path(output) if output is not None else Path(lang_dir) / REPORT_FILE
    with atomic_open(path) as fh:
        fh.write(page)
    return path, warnings
