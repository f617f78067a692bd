"""The Makefile's LANG: the wiki language only when given on make's command line, and never
a broken locale inside the recipes; its install: quiet unless it fails."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(*args: str, env_lang: str = "en_US.UTF-8") -> str:
    env = {**os.environ, "LANG": env_lang}
    env.pop("LC_ALL", None)
    out = subprocess.run(["make", "-s", "-C", str(ROOT), *args], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout


def corpus_command(*args: str, env_lang: str = "en_US.UTF-8") -> str:
    lines = [line for line in make("-n", "corpus", *args, env_lang=env_lang).splitlines()
             if "pipeline" in line and " run" in line]
    assert len(lines) == 1, lines
    return lines[0]


def test_shell_lang_is_not_the_wiki_language():
    assert "--lang hu " in corpus_command(env_lang="en_US.UTF-8")
    assert "--lang hu " in corpus_command(env_lang="uk")


def test_lang_on_the_command_line_is_the_wiki_language_and_dump_is_passed():
    cmd = corpus_command("LANG=uk", "DUMP=/dumps/ukwiki.xml.bz2")
    assert "--lang uk " in cmd and "--dump /dumps/ukwiki.xml.bz2" in cmd


def test_recipes_run_under_a_utf8_locale_even_with_lang_hu():
    printed = make("--eval", 'envcheck: ; @echo "$$LANG|$$LC_ALL|$$PYTHONUTF8"', "envcheck", "LANG=hu")
    assert printed.strip() == "C.UTF-8|C.UTF-8|1"


def fake_venv(tmp_path, status: int):
    """A venv whose python is a script: it prints an install banner and exits with `status`."""
    py = tmp_path / "venv" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text("#!/bin/sh\necho \"$@\" >> \"$(dirname \"$0\")/calls\"\n"
                  "echo 'Editable install banner ****'\necho 'pip: a message on stderr' >&2\n"
                  f"exit {status}\n")
    py.chmod(0o755)
    return tmp_path / "venv"


def setup(venv) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "-s", "-C", str(ROOT), f"VENV={venv}", "setup"], env=env,
                          capture_output=True, text=True)


def test_the_install_is_quiet_unless_it_fails(tmp_path):
    venv = fake_venv(tmp_path / "ok", 0)
    res = setup(venv)
    assert res.returncode == 0, res.stderr
    assert "banner" not in res.stdout + res.stderr and "stderr" not in res.stdout + res.stderr
    # one line, before the quiet minutes: what it installs and that it takes a while (issue 52)
    assert res.stdout.strip().splitlines() == [
        f"installing wiki2bert and its dependencies into {venv}: pip install -e '.[all]' (torch, "
        "transformers, DeepSpeed, Dask, datasets, word segmenters; about 2 GB), a few minutes and quiet "
        f"until done (log: {venv}/install.log)"]
    assert (venv / ".installed").is_file() and "banner" in (venv / "install.log").read_text()
    assert "install --quiet -e .[all]" in (venv / "bin" / "calls").read_text()

    venv = fake_venv(tmp_path / "broken", 1)
    res = setup(venv)
    assert res.returncode != 0
    assert "pip: a message on stderr" in res.stderr and "failed: pip's messages above" in res.stderr
    assert not (venv / ".installed").exists()
