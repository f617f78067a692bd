"""Fine-tuning where the Hub cannot be reached and offline mode is not set (issue 60): the Hub is
asked once (trainer/finetune/hub_reach.py), then the cache alone is read, so a `--suite` or a
`--compare` model not in the cache is one line within seconds, not 24 lines of retries over
25 s. HF_ENDPOINT names a local port nothing listens on; a local HTTP server stands for a Hub
that answers."""
from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.helpers.hub_datasets import TAGGING_FEATURES, hub_folder, tagging_splits

ROOT = Path(__file__).resolve().parents[3]


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def networked(tmp_path: Path, endpoint: str) -> dict:
    """This process's environment with the offline settings unset, its caches in tmp_path, the
    Hub at `endpoint`."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    home = tmp_path / "hf_home"
    return {**env, "HF_ENDPOINT": endpoint, "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"),
            "HF_DATASETS_CACHE": str(home / "datasets"), "PYTHONUTF8": "1"}


def finetune(tmp_path: Path, endpoint: str, *args) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "trainer.finetune", *map(str, args)], cwd=ROOT,
                         env=networked(tmp_path, endpoint), capture_output=True, text=True, timeout=300)
    return res, time.monotonic() - start


def test_a_suite_without_the_hub_is_one_line_in_seconds(tmp_path):
    endpoint = closed_port()
    res, took = finetune(tmp_path, endpoint, "--model", tmp_path / "model", "--suite", "hu",
                         "--output_dir", tmp_path / "out")
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [res.stderr.strip()], res.stderr   # one line, no "Retrying in"
    assert res.stderr.startswith("Error: --dataset unimelb-nlp/wikiann --dataset_config hu: not in the "
                                 f"datasets cache and the Hub cannot be reached ({endpoint}: ")
    assert took < 20, took   # the retries alone took 25 s
    assert not (tmp_path / "out").exists()


def test_a_compare_model_without_the_hub_is_one_line(tmp_path):
    data = hub_folder(tmp_path / "ner", {"hu": tagging_splits((30, 10, 10))}, TAGGING_FEATURES)
    endpoint = closed_port()
    res, _ = finetune(tmp_path, endpoint, "--model", tmp_path / "model", "--dataset", data,
                      "--dataset_config", "hu", "--compare", "someone/bert-nowhere", "--output_dir", tmp_path / "out")
    *before, last = res.stderr.strip().splitlines()
    assert res.returncode == 1 and [x.split(":")[0] for x in before] == [f"dataset {data} hu"], res.stderr
    assert last.startswith("Error: model someone/bert-nowhere: no such folder, not in the Hugging Face "
                           f"cache, and the Hub cannot be reached ({endpoint}: ")


class _Answers(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):   # noqa: N802 - http.server's name
        self.send_response(401)   # any answer: the Hub is there
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_hub_that_answers_is_reachable_and_offline_mode_is_restored(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    check = ("from trainer.finetune.hub_reach import hub_or_cache, hub_unreachable\n"
             "import datasets.config, huggingface_hub.constants as c\n"
             "with hub_or_cache() as why:\n"
             "    print(repr(why), c.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE)\n"
             "print(c.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE)\n")
    try:
        up = f"http://127.0.0.1:{server.server_address[1]}"
        res = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=networked(tmp_path, up),
                             capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
    assert res.stdout.splitlines() == ["'' False False", "False False"], res.stderr
    down = closed_port()
    res = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=networked(tmp_path, down),
                         capture_output=True, text=True, timeout=120)
    said, after = res.stdout.splitlines()
    assert said.startswith(f"'{down}: ") and said.endswith(" True True") and after == "False False"
