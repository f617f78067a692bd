"""What a rerun of `make pretrain` does with the run it finds, by BUDGET (the run's total time)."""
from __future__ import annotations

import json
from types import SimpleNamespace

from recipes.continuation import continuation


def checkpoint(out, step: int, **meta):
    """A complete checkpoint folder as the trainer writes it (model.pt and meta.json)."""
    path = out / "checkpoints" / f"ckpt_{step:08d}"
    path.mkdir(parents=True)
    (path / "model.pt").write_bytes(b"")
    (path / "meta.json").write_text(json.dumps({"step": step, "format_version": 1, **meta}))
    return path


def test_a_rerun_trains_resumes_continues_or_says_why_not(tmp_path, capsys):
    out = tmp_path / "run"
    assert continuation(SimpleNamespace(budget="5m"), out, None) is None          # a new run
    checkpoint(out, 80, end_step=100, budget_s=300.0, stable_step=80, stable=True)
    newest = checkpoint(out, 100, end_step=100, budget_s=300.0, stable_step=80)
    assert continuation(SimpleNamespace(budget="5m"), out, newest) is False      # finished: not rerun
    assert "already finished (100 steps" in capsys.readouterr().out
    assert continuation(SimpleNamespace(budget="30m"), out, newest) == 80        # --extend from step 80
    said = capsys.readouterr().out
    assert "(100 steps for BUDGET=5m) continues from step 80, before its decay, to BUDGET=30m in all" in said
    assert continuation(SimpleNamespace(budget="2m"), out, newest) is False
    assert "planned for BUDGET=5m; BUDGET=2m is less" in capsys.readouterr().out
    # interrupted before its end with the same budget: a resume; before its decay: continues from the newest
    early = tmp_path / "early"
    newest = checkpoint(early, 40, end_step=100, budget_s=300.0, stable_step=None)
    assert continuation(SimpleNamespace(budget="5m"), early, newest) is None
    assert continuation(SimpleNamespace(budget="1h"), early, newest) == 40
