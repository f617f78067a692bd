"""The suite never reads or writes a user's caches: every library's cache folder, in this
process and in the processes tests start, lies in the run's temporary folder (tests/conftest.py),
and the hubs are offline."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TEST_CACHE

PROBE = """
import json, os, torch.hub, matplotlib, datasets.config, huggingface_hub.constants as hub
from pipeline.text.language_id import _cache_path
print(json.dumps({"datasets": str(datasets.config.HF_DATASETS_CACHE), "hub": hub.HF_HUB_CACHE,
                  "torch_hub": torch.hub.get_dir(), "matplotlib": matplotlib.get_cachedir(),
                  "language_id": str(_cache_path()), "offline": datasets.config.HF_HUB_OFFLINE}))
"""


def cache_folders(env: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                         check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_cache_is_the_runs_temporary_folder():
    assert TEST_CACHE.is_dir() and not TEST_CACHE.is_relative_to(Path.home())
    found = cache_folders()
    assert found.pop("offline") is True
    for name, folder in found.items():
        assert Path(folder).resolve().is_relative_to(TEST_CACHE.resolve()), (name, folder)


def test_a_users_own_cache_settings_do_not_reach_the_tests(tmp_path):
    """What a user exported (HF_HOME and the rest at their own cache) is overridden for a test
    run: the test above, run by a fresh pytest with the user's settings, passes, and the user's
    folder stays untouched."""
    user = tmp_path / "user-cache"
    env = {**os.environ, "HF_HOME": str(user), "HF_DATASETS_CACHE": str(user / "ds"),
           "HF_HUB_CACHE": str(user / "hub"), "XDG_CACHE_HOME": str(user),
           "TRANSFORMERS_CACHE": str(user / "tf"), "MPLCONFIGDIR": str(user / "mpl"),
           "TORCH_HOME": str(user / "torch")}
    for var in ("WIKI2BERT_TEST_CACHE", "WIKI2BERT_TEST_CACHE_OWNER", "PYTEST_XDIST_WORKER"):
        env.pop(var, None)
    root = Path(__file__).resolve().parents[1]
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                          "no:xdist", f"{Path(__file__).relative_to(root)}::"
                          "test_every_cache_is_the_runs_temporary_folder"],
                         capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 passed" in res.stdout
    assert not user.exists()


@pytest.mark.parametrize("var", ["HF_HOME", "HF_DATASETS_CACHE", "XDG_CACHE_HOME", "MPLCONFIGDIR"])
def test_the_environment_names_the_temporary_folder(var):
    assert Path(os.environ[var]).is_relative_to(TEST_CACHE)
