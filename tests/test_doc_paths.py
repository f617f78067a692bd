"""Every file a doc or a config mentions exists: repo paths such as `docs/training.md` or
`scripts/slurm/*.sbatch` in the README, docs/, bench/ and data/ READMEs and the configs'
comments, and the relative links of the Markdown files. (Outputs under data/ are not checked:
they exist only after a run.)"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("bench/*.md"),
               *ROOT.glob("data/*.md"), *ROOT.glob("scripts/**/*.md"), *ROOT.glob("trainer/configs/*.json")])
REPO_PATH = re.compile(r"(?<![\w./-])((?:common|pipeline|trainer|vocab|docs|scripts|bench|tests|data/sample|\.ci)/"
                       r"[\w./*-]*\.(?:py|md|json|sh|toml|bz2|sbatch|slurm|ya?ml))(?![\w{])")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def mentioned(path: Path) -> list[tuple[str, Path]]:
    """(as written, where it should be) for each path `path` mentions."""
    text = path.read_text(encoding="utf-8")
    found = [(m.group(1), ROOT / m.group(1)) for m in REPO_PATH.finditer(text)]
    if path.suffix == ".md":
        found += [(m.group(1), path.parent / m.group(1)) for m in LINK.finditer(text)
                  if "://" not in m.group(1) and not m.group(1).startswith("mailto:")]
    return found


def exists(target: Path) -> bool:
    if "*" in target.name or "*" in str(target.parent):
        return any(ROOT.glob(str(target.relative_to(ROOT))))
    return target.exists()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_a_doc_or_config_mentions_exists(doc):
    missing = [written for written, target in mentioned(doc) if not exists(target)]
    assert missing == [], f"{doc.relative_to(ROOT)} mentions files that do not exist: {missing}"


def test_the_check_sees_paths_and_links(tmp_path):
    assert ("docs/training.md", ROOT / "docs" / "training.md") in mentioned(ROOT / "trainer/configs/tiny_cpu.json")
    assert any(w == "cluster.md" for w, _ in mentioned(ROOT / "docs" / "pipeline.md"))
    assert len([m for d in DOCS for m in mentioned(d)]) > 100
