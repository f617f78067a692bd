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


def venv_of_this_python(tmp_path):
    """A VENV whose python and pipeline are this interpreter's, its install marked done (newer than
    pyproject.toml), so that `make pretrain` and `make corpus` run the checkout's code here."""
    import sys

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, run in (("python", ""), ("pipeline", " -m pipeline")):
        script = venv / "bin" / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}"{run} "$@"\n')
        script.chmod(0o755)
    (venv / ".installed").touch()
    return venv


def make_run(venv, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "MAKEFLAGS", "MFLAGS")}
    return subprocess.run(["make", "-s", "-C", str(ROOT), f"VENV={venv}", *args], env={**full, **env},
                          capture_output=True, text=True, timeout=300)


def error_line(res: subprocess.CompletedProcess) -> str:
    lines = [line for line in res.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1, res.stderr
    return lines[0]


def test_make_pretrains_advice_names_what_make_pretrain_takes(tmp_path):
    """Issue 60: the hint named --allow-unknown-lang, which `make pretrain` refused."""
    venv = venv_of_this_python(tmp_path)
    res = make_run(venv, "pretrain", "LANG=xq", f"DATA_DIR={tmp_path / 'data'}")
    line = error_line(res)
    assert res.returncode != 0 and line.startswith("Error: LANG=xq is not the code of a Wikipedia")
    assert "PRETRAIN_OPTS=--allow-unknown-lang" in line
    ok = make_run(venv, "pretrain", "LANG=xq", f"DATA_DIR={tmp_path / 'data'}",
                  f"PRETRAIN_OPTS=--allow-unknown-lang --dry-run --device cpu --runs {tmp_path / 'runs'}")
    assert ok.returncode == 0, ok.stderr
    assert "--lang xq download --allow-unknown-lang" in ok.stdout
    named = error_line(make_run(venv, "pretrain", "LANG=Hungarian", f"DATA_DIR={tmp_path / 'data'}"))
    assert "LANG=Hungarian" in named and "hu for hu.wikipedia.org" in named and "allow-unknown" not in named


def test_make_corpus_names_make_corpus_variables(tmp_path):
    """Issue 60: `make corpus` without a network said `--dump PATH`; make users type DUMP=."""
    import socket

    with socket.socket() as s:   # a port nothing listens on: the dump server cannot be reached
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    venv = venv_of_this_python(tmp_path)
    res = make_run(venv, "corpus", "LANG=hu", f"DATA_DIR={tmp_path / 'data'}", WIKI2BERT_DUMPS_URL=closed)
    line = error_line(res)
    assert "cannot reach" in line and line.endswith("or pass a local dump with DUMP=PATH"), line
    line = error_line(make_run(venv, "corpus", "LANG=xq", f"DATA_DIR={tmp_path / 'data'}"))
    assert "LANG=xq" in line and "CORPUS_OPTS=--allow-unknown-lang" in line
    opts = "--allow-unknown-lang --vocab-size 900"
    assert opts in corpus_command("LANG=xq", f"CORPUS_OPTS={opts}")
