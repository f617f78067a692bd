"""The layout's rules (docs/architecture.md), checked on the source: dependencies run one way,
no stage imports another, the trainer reaches the pipeline only through the HDF5 contract,
and no module grows past ~400 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "vocab", "trainer", "scripts")

# package folder -> the project modules its code may import (prefixes)
ALLOWED = {
    "pipeline/core": ("pipeline.core",),
    "pipeline/text": ("pipeline.core", "pipeline.text"),
    "pipeline/encoding": ("pipeline.core", "pipeline.encoding", "vocab"),
    "pipeline/report": ("pipeline.core", "pipeline.text", "pipeline.encoding", "pipeline.report", "vocab"),
    "pipeline/stages": ("pipeline.core", "pipeline.text", "pipeline.encoding", "pipeline.report", "vocab"),
    "pipeline": ("pipeline.core", "pipeline.cli"),        # cli.py: stages load via the registry
    "vocab": ("vocab",),
    "trainer": ("trainer", "vocab", "pipeline.encoding.hdf5_format"),
}


def modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path


def project_imports(path: Path) -> list[str]:
    """Absolute names of the project modules `path` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = here.split(".")[: -node.level]
                base = ".".join(parent + ([base] if base else []))
            names += [f"{base}.{a.name}" if base and node.module is None else base for a in node.names]
    return [n for n in names if n.split(".")[0] in PACKAGES]


def rule_for(path: Path) -> tuple[str, tuple[str, ...]] | None:
    rel = path.relative_to(ROOT).parent.as_posix()
    for folder in sorted(ALLOWED, key=len, reverse=True):
        if rel == folder or rel.startswith(folder + "/"):
            return folder, ALLOWED[folder]
    return None


@pytest.mark.parametrize("path", list(modules()), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_dependencies_run_one_way(path):
    rule = rule_for(path)
    if rule is None:   # scripts/ use the product as a user would
        return
    folder, allowed = rule
    for name in project_imports(path):
        assert any(name == a or name.startswith(a + ".") for a in allowed), \
            f"{path.relative_to(ROOT)} imports {name}; {folder}/ may import only {allowed}"
        if folder == "pipeline/stages":
            assert not name.startswith("pipeline.stages."), f"{path.name} imports another stage: {name}"


@pytest.mark.parametrize("path", list(modules()), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_over_400_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400


def test_the_rules_see_relative_and_absolute_imports(tmp_path):
    assert "pipeline.core.errors" in project_imports(ROOT / "pipeline" / "cli.py")
    assert "pipeline.text.documents" in project_imports(ROOT / "pipeline" / "text" / "splitting.py")


def test_every_package_folder_is_a_regular_package():
    """setuptools' find_packages (pyproject) ships only folders with an __init__.py."""
    for package in ("pipeline", "vocab", "trainer"):
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            if any(folder.glob("*.py")):
                assert (folder / "__init__.py").is_file(), folder.relative_to(ROOT)
