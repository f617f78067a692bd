"""The README's demo figures come from a run of the code as it is. Those that are deterministic
are checked here: the ones the configs fix (vocab size, steps, ranks), and the held-out articles
and eval instances that the demo's pipeline part writes (a run of `scripts/demo.py --only
pipeline` with the demo's own settings, ~10 s).

The fill-mask ranks need the whole demo (two trainings, export, transformers: three minutes on
two cores), and float sums in training may differ on another CPU; they are checked only when
asked: WIKI2BERT_FULL_DEMO=1 pytest tests/scripts/test_readme_figures.py (after a README update
from a fresh `make demo`, which says when and on what)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers.script_module import load_script

demo = load_script("scripts/demo.py")
ROOT = demo.ROOT
README = (ROOT / "README.md").read_text(encoding="utf-8")


def figure(pattern: str) -> tuple[str, ...]:
    m = re.search(pattern, README)
    assert m, f"README.md no longer says {pattern!r}: update this test with the README"
    return m.groups()


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_figures_the_configs_fix():
    vocab, *ranks = figure(r"ranks among the ([\d,]+) tokens: (\d+), (\d+) and (\d+)")
    bert = json.loads((demo.CONFIGS / "demo_bert_tiny.json").read_text(encoding="utf-8"))
    assert number(vocab) == bert["vocab_size"]
    assert len(ranks) == len(demo.FILL_MASK_EXAMPLES)
    assert all(1 <= int(r) <= bert["vocab_size"] for r in ranks)
    ranks_n, steps = figure(r"gloo, (\d+) ranks, (\d+) steps\)")
    settings = demo.Settings(data_dir=ROOT)
    assert int(ranks_n) == settings.nproc
    assert int(steps) == json.loads(settings.phase1_config.read_text(encoding="utf-8"))["max_steps"]
    assert int(figure(r"\((\d+) CPU ranks")[0]) == settings.nproc
    assert number(figure(r"a (\d+)-token vocab")[0]) == settings.vocab_size


@pytest.mark.slow
def test_the_held_out_figures_are_what_the_demo_pipeline_writes(tmp_path):
    articles, instances = figure(r"(\d+) held-out articles give ([\d,]+)\s+eval instances")
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), "--only", "pipeline",
                          "--data-dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                         text=True, encoding="utf-8", timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    s = demo.Settings(data_dir=tmp_path)
    shard = json.loads((s.lang_dir / "sharded" / "manifest.json").read_text(encoding="utf-8"))["summary"]
    assert shard["test_documents"] == int(articles)
    seq, pred = s.encode[0]   # phase 1's shards: the eval the README quotes
    encoded = json.loads((s.hdf5_dir(seq, pred) / "manifest.json").read_text(encoding="utf-8"))["summary"]
    assert encoded["instances"] - encoded["training_instances"] == number(instances)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("WIKI2BERT_FULL_DEMO") != "1",
                    reason="the whole demo takes minutes: set WIKI2BERT_FULL_DEMO=1 to compare its "
                           "fill-mask ranks with the README's")
def test_the_fill_mask_ranks_are_a_fresh_demo_runs(tmp_path):
    *_, r1, r2, r3 = figure(r"ranks among the ([\d,]+) tokens: (\d+), (\d+) and (\d+)")
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), "--data-dir", str(tmp_path)],
                         cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8", timeout=1800)
    assert res.returncode == 0, res.stderr[-3000:]
    m = re.search(r"expected word ranks (\d+), (\d+), (\d+)", res.stdout)
    assert m, res.stdout[-3000:]
    assert m.groups() == (r1, r2, r3)
