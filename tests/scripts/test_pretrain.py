"""`make pretrain` / scripts/pretrain.py: one command from a dump to an evaluated model, end to
end on the shipped sample with a tiny budget; the rerun skips the training; the vocab rule."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from scripts.vocab_rule import body_parameters, embedding_warning, suggest_vocab_size

ROOT = Path(__file__).resolve().parents[2]


def pretrain(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUTF8": "1", "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "pretrain.py"), *map(str, args)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_from_the_sample_dump_to_an_evaluated_model_then_a_rerun_trains_nothing(sample_dump, tmp_path):
    args = ["--lang", "hu", "--dump", sample_dump, "--budget", "15s", "--device", "cpu",
            "--data-dir", tmp_path / "data", "--runs", tmp_path / "runs", "--workers", "1"]
    res = pretrain(*args)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    out = res.stdout
    assert "vocab: 2,643 distinct words, 572 seen 5+ times -> at most 1,000 pieces" in out
    assert "encode --pack --max-seq 128 --max-pred 40 --masked-lm-prob 0.3 --dupe-factor 1" in out
    for flag in ("--model_type modernbert", "--no_nsp", "--masking dynamic", "--train_budget 15s",
                 "--eval_every 200", "--lr_schedule wsd", "--optimizer adamw"):
        assert flag in out, flag
    assert "held-out MLM accuracy" in out and "[MASK]" in out and "' ranks " in out   # a word hidden whole, its rank
    assert "probe: not run (15 held-out sentences" in out
    assert out.strip().splitlines()[-4].startswith("== did it learn? On ")
    run = tmp_path / "runs" / "hu_modern"
    card = (run / "hf" / "README.md").read_text(encoding="utf-8")
    assert "ModernBertForMaskedLM" in card and "none logged" not in card
    assert json.loads((run / "hf" / "config.json").read_text())["vocab_size"] == 1024
    page = (tmp_path / "data" / "hu" / "report.html").read_text(encoding="utf-8")
    assert str(run) in page.split('<section id="training"')[1]

    again = pretrain(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "training: already finished" in again.stdout and "torchrun" not in again.stdout
    assert "$ python -m trainer.export" not in again.stdout


def test_bad_input_is_one_line(tmp_path):
    res = pretrain("--lang", "hu", "--dump", tmp_path / "nope.xml.bz2")
    assert res.returncode == 1 and res.stderr.strip().splitlines() == [
        f"Error: --dump {tmp_path / 'nope.xml.bz2'} does not exist"]


def test_the_vocab_rule_takes_the_smaller_of_the_corpus_and_the_model_bounds():
    small = {"hidden_size": 128, "num_hidden_layers": 3, "intermediate_size": 256}
    body = body_parameters(small)
    words = Counter({f"w{i}": 10 for i in range(9000)} | {f"r{i}": 1 for i in range(43000)})
    size, why = suggest_vocab_size(words, 128, body)
    assert "52,000 distinct words, 9,000 seen 5+ times" in why
    assert size == 3000 and "at most 3,000 for embeddings under half" in why   # the model decides
    # the case: 32k pieces on a tiny model are most of its parameters
    assert "embeddings (89%)" in embedding_warning(32000, 128, 510_000)
    assert embedding_warning(size, 128, body) is None
    big = {"hidden_size": 768, "num_hidden_layers": 22, "intermediate_size": 1152}
    assert suggest_vocab_size(words, 768, body_parameters(big))[0] == 10000   # the corpus decides
