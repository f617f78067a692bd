"""The contract of a trainer refactor: a fixed CPU run of each family gives the per-step losses
recorded before (tests/trainer/golden/, written by tests/helpers/golden_runs.py), within float
rounding. A change that is meant to change them records them anew and says why."""
from __future__ import annotations

import json

import pytest

from tests.helpers.golden_runs import GOLDEN, RUNS, run

pytest.importorskip("transformers")   # the ModernBERT family


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_fixed_run_gives_the_recorded_losses(name, tmp_path):
    want = json.loads((GOLDEN / f"{name}.json").read_text())
    got = run(name, tmp_path)
    assert [r["step"] for r in got] == [r["step"] for r in want]
    for w, g in zip(want, got):
        assert set(w) == set(g), (w["step"], sorted(set(w) ^ set(g)))
        for key, value in w.items():
            assert g[key] == pytest.approx(value, rel=1e-5, abs=1e-6), (name, w["step"], key)
