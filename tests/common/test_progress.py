"""The progress rule the pipeline and fine-tuning share (common/progress.py)."""
from __future__ import annotations

from common.progress import PROGRESS_EVERY_ENV, duration, eta_text, progress_every


def test_the_interval_is_the_flag_then_the_variable_then_30_seconds(monkeypatch):
    monkeypatch.delenv(PROGRESS_EVERY_ENV, raising=False)
    assert progress_every() == 30 and progress_every(2.5) == 2.5
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "5")
    assert progress_every() == 5 and progress_every(0) == 0
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "often")
    assert progress_every() == 30


def test_durations_and_the_time_left_in_words():
    assert (duration(40), duration(725), duration(7380)) == ("40 s", "12 min 05 s", "2 h 03 min")
    assert eta_text(2, 6, 120.0) == "about 4 min 00 s left"
    assert eta_text(0, 6, 10.0) == "" and eta_text(6, 6, 10.0) == ""
