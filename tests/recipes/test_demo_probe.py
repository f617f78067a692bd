"""The demo's probe step: the command it runs, the verdict of its summary line, and what a corpus
needs where its probe is too small to run (issue 60)."""
from __future__ import annotations

import json
from pathlib import Path

from recipes.demo_probe import probe_command, probe_needs, probe_summary


def write(path: Path, p: tuple, b: tuple) -> Path:
    path.write_text(json.dumps({
        "metric": "entity_f1", "evaluated_on": "test", "seeds": [1, 2, 3],
        "data": {"examples": {"train": 400, "validation": 13, "test": 15}},
        "pretrained": {"mean": p[0], "sd": p[1]}, "random_init": {"mean": b[0], "sd": b[1]}}))
    return path


def test_the_verdict_needs_a_gap_of_two_sd(tmp_path):
    f = tmp_path / "results.json"
    assert "(pretraining helped)" in probe_summary(write(f, (0.7, 0.01), (0.5, 0.02)))
    assert "(no clear difference)" in probe_summary(write(f, (0.7, 0.05), (0.65, 0.02)))
    assert "(pretraining hurt)" in probe_summary(write(f, (0.2, 0.02), (0.68, 0.07)))
    assert "on 15 test sentences, 3 seeds" in probe_summary(f)


def test_the_command_is_the_finetune_contract(tmp_path):
    cmd = [str(c) for c in probe_command(Path("hf"), Path("data/hu"), Path("out"))]
    assert cmd[1:3] == ["-m", "trainer.finetune"]
    for flag, value in (("--model", "hf"), ("--probe", "data/hu"), ("--seeds", "1,2,3"),
                        ("--baseline", "random-init")):
        assert cmd[cmd.index(flag) + 1] == value


def manifests(lang: Path, sentences: int, held_out: int, dev: int, test: int) -> Path:
    """The shard and probe manifests' counts (pipeline/stages/shard.py's, probe.py's summaries)."""
    for stage, summary in (("sharded", {"sentences": sentences, "test_sentences": held_out}),
                           ("probe", {"test_sentences": test, "available": {"train": 434, "dev": dev, "test": test}})):
        (lang / stage).mkdir(parents=True, exist_ok=True)
        (lang / stage / "manifest.json").write_text(json.dumps({"summary": summary}))
    return lang


def test_what_a_corpus_needs_for_the_probe_from_its_own_yield(tmp_path):
    """The shipped sample: 801 sentences, 80 held out of which 28 had a usable mention: 1,000 for
    dev and test take 2,857 held-out sentences, 25% of a corpus of about 11,000 (14x)."""
    sample = manifests(tmp_path / "hu", 801, 80, 13, 15)
    assert probe_needs(sample) == "a corpus of about 11,000 filtered sentences holds that many out (14x this one's 801)"
    # uk's dump sharded before issue 60: 18,048 sentences, 10% held out, 395 usable: it has the text
    assert "its shards were made holding out less" in probe_needs(manifests(tmp_path / "uk", 18048, 696, 198, 197))
    assert probe_needs(tmp_path / "none") == "a larger dump holds that many out"
