"""Fine-tuning is not silent (issue 38): a start line saying what it trains and where its log
is, progress with the time left as plain lines in a log file, one line per finished seed, a
line for each seed reused from an earlier run, the CPU limit on training rows, and Ctrl-C as
one line that says how to resume (a real SIGINT to a real process)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.finetune_data import make_model_dir, tagged_sentences, write_conll
from tests.helpers.signals import default_sigint
from trainer.finetune.plan import limited_rows

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("progress")
    make_model_dir(root)
    write_conll(root / "train.conll", tagged_sentences(400, 1))
    write_conll(root / "dev.conll", tagged_sentences(40, 2))
    return root


def command(data: Path, out: Path, *extra) -> list[str]:
    return [sys.executable, "-m", "trainer.finetune", "--model", str(data / "hf"), "--task", "ner",
            "--train_file", str(data / "train.conll"), "--validation_file", str(data / "dev.conll"),
            "--output_dir", str(out), "--device", "cpu", *extra]


def env(**more) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), **more}


@pytest.mark.slow
def test_start_line_progress_per_seed_lines_and_reused_seeds(data, tmp_path):
    out = tmp_path / "ft"
    cmd = command(data, out, "--seeds", "1,2", "--baseline", "random-init", "--epochs", "2",
                  "--max_train_examples", "150", "--batch_size", "8")
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600,
                         env=env(WIKI2BERT_PROGRESS_EVERY="0"))
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    start = lines[0]
    assert start.startswith(f"fine-tuning {data / 'hf'} on ner (400 train, 40 validation examples;")
    assert "150 training rows (of 400: --max_train_examples 150; 0 trains on all)" in start
    assert "pretrained + random init, seeds 1,2: 4 runs of about 38 steps on cpu" in start
    assert f"log: {out / 'finetune.log'}" in start
    # plain progress lines (stderr is a pipe here), with the time left
    assert any(line.startswith("pretrained seed 1 lr 5e-05: ") and " left" in line for line in lines)
    done = [line for line in lines if line.startswith("[")]
    assert [d[:5] for d in done] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    assert "left" in done[0] and "examples/s" in done[0]
    assert (out / "finetune.log").read_text(encoding="utf-8").count("[4/4]") == 1

    again = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600, env=env())
    assert again.returncode == 0, again.stderr
    reused = [line for line in again.stderr.splitlines() if "reused from" in line]
    assert len(reused) == 4 and "(finished earlier with these settings)" in reused[0]


def test_the_training_subset_is_seeded_and_in_file_order():
    rows = list(range(1000))
    a, b = limited_rows(rows, 100), limited_rows(rows, 100)
    assert a == b == sorted(a) and len(set(a)) == 100
    assert limited_rows(rows, None) is rows and limited_rows(rows[:50], 100) == rows[:50]


@pytest.mark.slow
def test_ctrl_c_is_one_line_that_says_how_to_resume(data, tmp_path):
    out = tmp_path / "ft"
    proc = subprocess.Popen(command(data, out, "--seeds", "1,2,3", "--epochs", "50",
                                    "--max_train_examples", "0"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=env(WIKI2BERT_PROGRESS_EVERY="0"), preexec_fn=default_sigint)
    log = out / "finetune.log"
    deadline = time.time() + 300
    while time.time() < deadline and "pretrained seed 1 lr" not in (
            log.read_text(encoding="utf-8") if log.is_file() else ""):
        time.sleep(0.5)   # training has started: the interrupt lands in the loop
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.strip().splitlines()[-1]
    assert last == (f"Interrupted: the finished seeds are kept in {out}/runs; rerun the same "
                    "command to train only the missing ones")
