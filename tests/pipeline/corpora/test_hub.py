"""The Hub path of `pipeline ingest --corpus`, against a stand-in Hub on 127.0.0.1 (HF_ENDPOINT) so
that huggingface_hub's own client runs, in a `pipeline` process of its own: only the language's
training files fetched, a kill -9 mid-download resumed without fetching the finished files again,
a bad checksum fetched once more then one line, offline with and without a cache, a gated
repository, --max-tokens fetching only what the slice needs, and the one-line errors of an
unknown language and a corpus without the language."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.corpora.tokens import estimate_tokens
from tests.conftest import SAMPLE_DUMP
from tests.helpers.hub_corpus import fineweb2_repo, language_score
from tests.helpers.stand_in_hub import StandInHub

REPO = "HuggingFaceFW/fineweb-2"
TRAIN = [f"data/hun_Latn/train/000_{k:05d}.parquet" for k in range(3)]


def hungarian(n: int) -> list[list[str]]:
    return [[f"A(z) {i}. magyar weboldal első bekezdése, amely elég hosszú ahhoz, hogy számítson.",
             f"Egy második bekezdés a(z) {i}. oldalról, más szavakkal és egy számmal: {i * 7}."]
            for i in range(n)]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    finnish = [[f"Tämä on suomenkielinen verkkosivu numero {i}, jossa on tarpeeksi sanoja."] for i in range(40)]
    return fineweb2_repo(tmp_path_factory.mktemp("hub") / "fineweb-2",
                         {"hun_Latn": hungarian(120), "fin_Latn": finnish})


def pipeline(env: dict, data: Path, *args: str, lang: str = "hu", wait: bool = True):
    cmd = [sys.executable, "-m", "pipeline", "--data-dir", str(data), "--lang", lang, "ingest", *args]
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)


def error_line(result) -> str:
    assert result.returncode == 1, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("Error: ") and "Traceback" not in result.stderr, result.stderr
    return lines[-1]


def manifest(data: Path) -> dict:
    return json.loads((data / "hu/ingested/manifest.json").read_text())


def test_only_the_languages_training_files_verified_with_provenance_and_licence(repo, tmp_path):
    with StandInHub({REPO: repo}, page_size=4) as hub:   # small pages: the listing follows Link
        result = pipeline(hub.env(tmp_path), tmp_path / "data", "--corpus", f"fineweb-2@{hub.commits[REPO]}")
        assert result.returncode == 0, result.stderr
        assert dict(hub.gets) == dict.fromkeys(TRAIN, 1)   # not fin_Latn, test/ nor _removed
    m = manifest(tmp_path / "data")
    corpus = m["corpora"]["fineweb-2"]
    assert (corpus["repo"], corpus["revision"], corpus["language"]) == (REPO, hub.commits[REPO], "hun_Latn")
    assert corpus["license"] == ["odc-by"] and "ODC-By 1.0" in corpus["license_text"]
    assert (corpus["from"], corpus["slice_files"]) == ("hub", 3)
    assert m["summary"]["per_source"]["fineweb-2"]["documents"] == 120
    parts = sorted((tmp_path / "data/hu/ingested").glob("fineweb-2__*.txt"))
    assert [p.name for p in parts] == [f"fineweb-2__data_hun_Latn_train_000_{k:05d}_0000.txt" for k in range(3)]
    assert "Traceback" not in result.stderr and "HTTP Request" not in result.stderr


def test_kill_9_mid_download_resumes_without_fetching_finished_files(repo, tmp_path):
    with StandInHub({REPO: repo}) as hub:
        env, data = hub.env(tmp_path), tmp_path / "data"
        hub.hold(TRAIN[1])                    # the second file stops half way
        proc = pipeline(env, data, "--corpus", "fineweb-2", wait=False)
        try:
            assert hub.held.wait(60), "the download never reached the second file"
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=60)
        hub.release()
        assert (hub.gets[TRAIN[0]], hub.gets[TRAIN[1]], hub.gets[TRAIN[2]]) == (1, 1, 0)
        assert not (data / "hu/ingested/manifest.json").exists()
        result = pipeline(env, data, "--corpus", "fineweb-2")
        assert result.returncode == 0, result.stderr
        # the finished file is not fetched again, the cut one is fetched whole once more
        assert (hub.gets[TRAIN[0]], hub.gets[TRAIN[1]], hub.gets[TRAIN[2]]) == (1, 2, 1)
    assert manifest(data)["summary"]["documents"] == 120


def test_a_bad_checksum_is_fetched_once_more_then_one_line(repo, tmp_path):
    with StandInHub({REPO: repo}) as hub:
        hub.corrupt[TRAIN[0]] = 1             # the first answer's bytes are damaged, the second fine
        result = pipeline(hub.env(tmp_path / "once"), tmp_path / "once/data", "--corpus", "fineweb-2")
        assert result.returncode == 0, result.stderr
        assert "does not match the Hub's: fetching it once more" in result.stderr
        assert hub.gets[TRAIN[0]] == 2
        assert manifest(tmp_path / "once/data")["summary"]["documents"] == 120
        hub.corrupt[TRAIN[2]] = 99            # damaged every time
        hub.gets.clear()
        result = pipeline(hub.env(tmp_path / "always"), tmp_path / "always/data", "--corpus", "fineweb-2")
        line = error_line(result)
        assert "does not match the Hub's, twice" in line and TRAIN[2] in line
        assert hub.gets[TRAIN[2]] == 2
    assert not list((tmp_path / "always/data/hu/ingested").glob("*.txt"))   # nothing half-written
    blobs = tmp_path / "always/hf_hub/datasets--HuggingFaceFW--fineweb-2/blobs"
    assert not [b for b in blobs.iterdir() if b.name == hub.files[REPO][TRAIN[2]]["sha256"]]


@pytest.mark.slow
def test_offline_not_cached_is_one_line_first_and_cached_runs_without_the_hub(repo, tmp_path):
    with StandInHub({REPO: repo}) as hub:
        offline = hub.env(tmp_path, offline=True)
        line = error_line(pipeline(offline, tmp_path / "cold", "--corpus", "fineweb-2"))
        assert "HF_HUB_OFFLINE" in line and "--corpus-root" in line
        assert not (tmp_path / "cold").exists()          # before anything is written
        url = "web=hf://datasets/HuggingFaceFW/fineweb-2/data/hun_Latn/train/*.parquet"
        result = subprocess.run([sys.executable, "-m", "pipeline", "--data-dir", str(tmp_path / "run"), "run",
                                 "--dump", str(SAMPLE_DUMP), "--source", url], env=offline,
                                capture_output=True, text=True, timeout=180)
        assert "HF_HUB_OFFLINE" in error_line(result) and not (tmp_path / "run").exists()   # before any stage
        assert pipeline(hub.env(tmp_path), tmp_path / "warm", "--corpus", "fineweb-2").returncode == 0
    # the Hub is gone: the cache (listing and files) is enough, and gives the same text
    result = pipeline(offline, tmp_path / "offline", "--corpus", "fineweb-2")
    assert result.returncode == 0, result.stderr
    assert manifest(tmp_path / "offline")["corpora"]["fineweb-2"]["from"] == "cache"
    for part in (tmp_path / "warm/hu/ingested").glob("*.txt"):
        assert (tmp_path / "offline/hu/ingested" / part.name).read_bytes() == part.read_bytes()


def test_unknown_language_and_a_corpus_without_the_language_are_one_line(repo, tmp_path):
    with StandInHub({REPO: repo}) as hub:
        env = hub.env(tmp_path)
        line = error_line(pipeline(env, tmp_path / "d", "--corpus", "fineweb-2", lang="hux-x"))
        assert "--lang hux-x: not a Wikipedia's code" in line
        line = error_line(pipeline(env, tmp_path / "d", "--corpus", "fineweb-2", lang="et"))
        assert "FineWeb-2 has no part for --lang et" in line and "fin_Latn" in line and "hun_Latn" in line
        line = error_line(pipeline(env, tmp_path / "d", "--corpus", "fineweb2"))
        assert "did you mean fineweb-2" in line
        line = error_line(pipeline(env, tmp_path / "d", "--corpus", "fineweb-2@v9"))
        assert "HuggingFaceFW/fineweb-2: no such revision" in line
        assert not hub.gets
    assert not (tmp_path / "d").exists()


@pytest.mark.slow
def test_a_connection_that_keeps_breaking_is_one_line_and_a_break_is_resumed(repo, tmp_path):
    with StandInHub({REPO: repo}) as hub:
        hub.cut[TRAIN[0]] = 1                 # one break: huggingface_hub resumes it (a Range request)
        result = pipeline(hub.env(tmp_path / "once"), tmp_path / "once/data", "--corpus", "fineweb-2")
        assert result.returncode == 0, result.stderr
        assert hub.gets[TRAIN[0]] == 2 and manifest(tmp_path / "once/data")["summary"]["documents"] == 120
        hub.cut[TRAIN[1]] = 99                # it breaks every time
        line = error_line(pipeline(hub.env(tmp_path / "always"), tmp_path / "always/data", "--corpus", "fineweb-2"))
    assert "the connection to the Hub" in line and "the files fetched so far are kept" in line


def test_gated_repository_is_one_line(repo, tmp_path):
    with StandInHub({REPO: repo}, gated=(REPO,)) as hub:
        line = error_line(pipeline(hub.env(tmp_path), tmp_path / "d", "--corpus", "fineweb-2"))
    assert "is gated: accept its terms" in line and "hf auth login" in line


def test_max_tokens_fetches_only_the_files_the_slice_needs(repo, tmp_path):
    docs = hungarian(120)
    tokens = [estimate_tokens("\n".join(d)) for i, d in enumerate(docs) if language_score(i) >= 0.7]
    first_file = sum(t for i, t in zip([i for i in range(120) if language_score(i) >= 0.7], tokens) if i < 40)
    budget = first_file + 100                 # into the second file, far from the third
    with StandInHub({REPO: repo}) as hub:
        result = pipeline(hub.env(tmp_path), tmp_path / "d", "--corpus", "fineweb-2", "--max-tokens", str(budget),
                          "--min-language-score", "0.7")
        assert result.returncode == 0, result.stderr
        assert dict(hub.gets) == {TRAIN[0]: 1, TRAIN[1]: 1}   # the third file is never fetched
    source = manifest(tmp_path / "d")["summary"]["per_source"]["fineweb-2"]
    assert budget <= source["estimated_tokens"] < budget + max(tokens)   # stopped at the document reaching it
    taken = next(n for n in range(len(tokens)) if sum(tokens[:n]) >= budget)
    assert source["documents"] == taken and source["below_min_language_score"] > 0


def fill(path: Path) -> None:
    """Another writer takes every free byte of path's disk."""
    with open(path, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (1 << 16))
                fh.flush()
        except OSError:   # ENOSPC: full now
            pass


@pytest.mark.faults
def test_a_full_disk_mid_download_is_one_line_and_the_rerun_keeps_finished_files(tmp_path):
    from tests.helpers.tmpfs import Tmpfs

    rnd = __import__("random").Random(0)   # words that do not compress: files of about 400 KB
    words = ["".join(rnd.choice("abcdefghijklmnoprstuvzáéíóöőúüű") for _ in range(8)) for _ in range(20_000)]
    big = [[" ".join(rnd.choice(words) for _ in range(300))] for _ in range(120)]
    repo = fineweb2_repo(tmp_path / "fineweb-2", {"hun_Latn": big})
    disk = Tmpfs(tmp_path / "disk", "4m")
    try:
        with StandInHub({REPO: repo}) as hub:
            env = dict(hub.env(tmp_path), HF_HUB_CACHE=str(disk.path / "hub"))
            hub.hold(TRAIN[1])
            proc = pipeline(env, tmp_path / "data", "--corpus", "fineweb-2", wait=False)
            assert hub.held.wait(60)
            fill(disk.path / "filler")                # the second file's rest finds the disk full
            hub.release()
            _out, err = proc.communicate(timeout=120)
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert proc.returncode == 1 and lines[-1].startswith("Error: ") and "[ENOSPC]" in lines[-1], err
            assert "Traceback" not in err
            (disk.path / "filler").unlink()
            result = pipeline(env, tmp_path / "data", "--corpus", "fineweb-2")
            assert result.returncode == 0, result.stderr
            assert (hub.gets[TRAIN[0]], hub.gets[TRAIN[1]], hub.gets[TRAIN[2]]) == (1, 2, 1)
            fill(disk.path / "filler")                # no room for a file at all: said before fetching
            line = error_line(pipeline(dict(env, HF_HUB_CACHE=str(disk.path / "other")), tmp_path / "d2",
                                       "--corpus", "fineweb-2"))
            assert "the Hugging Face cache" in line and "free" in line
    finally:
        disk.unmount()
