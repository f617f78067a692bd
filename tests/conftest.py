"""Fixtures shared by the whole suite. Tests run on the project's own fixtures; the real
dumps in ../shared/data are used only where present (`shared_data` skips otherwise)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DUMP = ROOT / "data" / "sample" / "huwiki-sample.xml.bz2"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def sample_dump() -> Path:
    """The small Hungarian MediaWiki dump the project ships."""
    assert SAMPLE_DUMP.is_file(), f"{SAMPLE_DUMP} missing"
    return SAMPLE_DUMP


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data with the real (truncated) ukwiki and viwiki dumps; skipped where absent."""
    if not (SHARED_DATA / "ukwiki.xml.xz").is_file():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA
