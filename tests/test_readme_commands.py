"""What a newcomer runs from the README works as the README and docs say (issue 52): the first
lines say how `make demo` and `make setup` relate, the fine-tuning commands carry the learning
rate docs/finetuning.md recommends for the small models `make pretrain` makes, and the folders
the commands write to are git-ignored."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def commands(text: str) -> list[str]:
    """The shell commands of the ```bash blocks, continuation lines joined."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [c for b in blocks for c in b.replace("\\\n", " ").splitlines() if c and not c.startswith("#")]


def test_the_first_lines_say_that_make_demo_runs_make_setup():
    after = re.search(r"```bash\n.*?```\n\n(.*?)\n\n", README, re.S).group(1)   # after the first commands
    assert "`make demo`" in after and "runs `make setup`" in after, after


def test_the_finetuning_commands_carry_the_learning_rate_for_small_models():
    finetune = [c for c in commands(README) if "trainer.finetune" in c and "--model " in c]
    assert finetune, "the README no longer shows a fine-tuning command: update this test"
    docs = (ROOT / "docs" / "finetuning.md").read_text(encoding="utf-8")
    small = re.search(r"ModernBERT 4 × 256 uses (\S+),", docs).group(1)
    for c in finetune:
        assert f"--learning_rate {small}" in c, c


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_the_folders_the_readme_commands_write_are_git_ignored():
    outputs = {m.group(1) for c in commands(README) for m in re.finditer(r"--output_dir (\w[\w.-]*)/", c)}
    assert "ft" in outputs
    for top in sorted(outputs):
        res = subprocess.run(["git", "check-ignore", "-q", f"{top}/x"], cwd=ROOT)
        assert res.returncode == 0, f"{top}/ (a README command's output) is not in .gitignore"
