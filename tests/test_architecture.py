"""The layout's rules (docs/architecture.md), checked on the source: dependencies run one way,
no stage imports another, the trainer reaches the pipeline only through the HDF5 contract, each
of the trainer's and the tokenization layer's rooms imports only the rooms below it, a
model-type string is compared in the model registry only, a tokenizer's kind is asked of the
kinds only (no kind name compared, no spec's type checked outside vocab/kinds/), recipes/ uses
the packages and none of them uses it, scripts/ and bench/ are imported by nothing, and no module
grows past ~400 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("common", "pipeline", "vocab", "trainer", "recipes", "scripts")
PRODUCT = ("common", "pipeline", "vocab", "trainer", "recipes")   # installed (pyproject.toml)

# package folder -> the project modules its code may import (prefixes). `common` holds the rules
# every half shares (atomic writes, OS-fault advice) and imports nothing of the project.
ALLOWED = {
    "common": ("common",),
    "pipeline/core": ("common", "pipeline.core",),
    "pipeline/text": ("common", "pipeline.core", "pipeline.text"),
    "pipeline/corpora": ("common", "pipeline.core", "pipeline.text", "pipeline.corpora"),
    "pipeline/encoding": ("common", "pipeline.core", "pipeline.encoding", "vocab"),
    "pipeline/report": ("common", "pipeline.core", "pipeline.text", "pipeline.encoding", "pipeline.report",
                        "vocab"),
    "pipeline/stages": ("common", "pipeline.core", "pipeline.text", "pipeline.encoding", "pipeline.report",
                        "pipeline.corpora", "vocab"),
    "pipeline": ("common", "pipeline.core", "pipeline.cli"),        # cli.py: stages load via the registry
    # the tokenization layer's rooms, lowest first (vocab/__init__.py): none imports one above it
    "vocab": ("common",),
    "vocab/core": ("common", "vocab.core"),
    "vocab/training": ("common", "vocab.core", "vocab.training"),
    "vocab/kinds": ("common", "vocab.core", "vocab.training", "vocab.kinds"),
    "vocab/reports": ("common", "vocab.core", "vocab.kinds", "vocab.reports"),
    "vocab/joint": ("common", "vocab.core", "vocab.training", "vocab.joint"),
    # the trainer's rooms, lowest first; the files at trainer/'s top (the entry, the loop, the
    # build of a run) may import any room
    "trainer/data": ("common", "trainer.data", "trainer.errors", "vocab", "pipeline.encoding.hdf5_format"),
    "trainer/models": ("common", "trainer.models", "trainer.data.unpadding"),
    "trainer/checkpoint": ("common", "trainer.checkpoint", "trainer.errors"),
    "trainer/runtime": ("common", "trainer.runtime", "trainer.checkpoint.layout", "trainer.data", "trainer.errors",
                        "vocab"),
    "trainer/config": ("common", "trainer.config", "trainer.models", "trainer.runtime", "trainer.errors",
                       "trainer.checkpoint.layout"),   # --init_from a run: its meta.json
    "trainer/export": ("common", "trainer.export", "trainer.checkpoint", "trainer.models", "vocab"),
    "trainer/finetune": ("common", "trainer.finetune", "trainer.export", "trainer.checkpoint", "vocab",
                         "trainer.models",                 # the registry: the rows a model takes
                         "trainer.runtime.distributed"),   # the one device rule
    "trainer/schedule": ("common", "trainer.schedule", "trainer.config", "trainer.errors"),
    "trainer/start": ("common", "trainer.start", "trainer.config", "trainer.data", "trainer.models",
                      "trainer.checkpoint", "trainer.runtime", "trainer.schedule", "trainer.errors", "vocab",
                      "pipeline.encoding.hdf5_format"),
    "trainer/evaluation": ("common", "trainer.evaluation", "trainer.config", "trainer.data", "trainer.models",
                           "trainer.runtime.distributed", "trainer.errors", "pipeline.encoding.hdf5_format",
                           "trainer.start.origin"),   # a run's weights, read as the start reads them
    "trainer": ("common", "trainer", "vocab", "pipeline.encoding.hdf5_format"),
    # what users run end to end uses every package; none of them uses it, nothing uses scripts/
    "recipes": PRODUCT,
    "scripts": PRODUCT,   # thin entries into recipes/ and developer tools: the product, as installed
}


def modules():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


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
    assert rule is not None, f"{path.relative_to(ROOT)}: no rule says what its folder may import"
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


def top_names(path: Path) -> set[str]:
    """The first part of every absolute import in `path` (`bench_probe`, `scripts`, `json` ...)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


BENCH = {"bench"} | {p.stem for p in (ROOT / "bench").glob("*.py")}


def test_scripts_and_bench_are_imported_by_nothing():
    """scripts/ (thin entries into recipes/, slurm jobs, developer tools) and bench/ (scripts that
    print a table) are run, never imported: the product, bench/ and the tests import packages."""
    product = [p for p in modules() if p.parts[len(ROOT.parts)] in PRODUCT]
    by_path = "load_script(" + '"scripts/'   # tests/helpers/script_module.py's loader, on scripts/
    wrong = []
    for path in product + sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "tests").rglob("*.py")):
        names, rel = top_names(path), path.relative_to(ROOT).as_posix()
        wrong += [f"{rel} imports scripts/"] if "scripts" in names else []
        wrong += [f"{rel} imports bench/: {sorted(names & BENCH)}"] if path in product and names & BENCH else []
        wrong += [f"{rel} loads scripts/ by path"] if by_path in path.read_text(encoding="utf-8") else []
    assert wrong == []


def test_the_scripts_rule_sees_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import json\nfrom scripts.pretrain import main\nimport bench_probe\nfrom . import x\n")
    assert top_names(probe) == {"json", "scripts", "bench_probe"}


def test_every_package_folder_is_a_regular_package():
    """setuptools' find_packages (pyproject) ships only folders with an __init__.py."""
    for package in PRODUCT:
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            if any(folder.glob("*.py")):
                assert (folder / "__init__.py").is_file(), folder.relative_to(ROOT)


def family_names() -> set[str]:
    from trainer.models import FAMILIES

    return set(FAMILIES)


def model_type_comparisons(path: Path) -> list[str]:
    """`x == "bert"`, `"modernbert" in (...)`, `match x: case "bert"` ... in `path`: a family's
    name compared (or matched) anywhere, as a string constant."""
    names, found = family_names(), []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op in operands:
                items = op.elts if isinstance(op, (ast.Tuple, ast.List, ast.Set)) else [op]
                found += [f"line {node.lineno}: {i.value!r}" for i in items
                          if isinstance(i, ast.Constant) and i.value in names]
        elif isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant) \
                and node.value.value in names:
            found.append(f"line {node.lineno}: case {node.value.value!r}")
    return found


@pytest.mark.parametrize("path", [p for p in modules() if p.parts[len(ROOT.parts)] == "trainer"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_model_type_is_compared_in_the_registry_only(path):
    """Everything else asks the family (trainer/models/family.py) what it can do."""
    if path == ROOT / "trainer" / "models" / "__init__.py":
        return
    assert model_type_comparisons(path) == [], f"{path.relative_to(ROOT)} compares a model type"


def test_the_model_type_rule_sees_comparisons(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('if args.model_type == "modernbert" or t in ("bert", "x"):\n    pass\n')
    assert len(model_type_comparisons(probe)) == 2


def kind_names() -> tuple[set[str], set[str]]:
    """(the registry's kind names, the kinds' class names)."""
    from vocab.kinds import KINDS
    from vocab.kinds.base import TokenizerKind

    return set(KINDS), {k.__name__ for k in KINDS.values()} | {TokenizerKind.__name__}


def kind_switches(path: Path) -> list[str]:
    """`spec.kind == "mecab"`, `x == "bytelevel-bpe"`, `isinstance(spec, VocabSpec)` ... in `path`: a
    kind's name compared, or a spec's type checked."""
    names, classes = kind_names()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            for op in [node.left, *node.comparators]:
                items = op.elts if isinstance(op, (ast.Tuple, ast.List, ast.Set)) else [op]
                found += [f"line {node.lineno}: {i.value!r}" for i in items
                          if isinstance(i, ast.Constant) and i.value in names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            found += [f"line {node.lineno}: {node.func.id}(..., {ast.unparse(k)})" for k in kinds
                      if ast.unparse(k).split(".")[-1] in classes]
        elif isinstance(node, ast.Constant) and node.value == "bytelevel-bpe":
            found.append(f"line {node.lineno}: the literal 'bytelevel-bpe'")
    return found


KIND_OWNERS = (ROOT / "vocab" / "kinds", ROOT / "vocab" / "training" / "bytelevel.py")


@pytest.mark.parametrize("path", [p for p in modules() if not any(p == o or o in p.parents for o in KIND_OWNERS)
                                  and p.parts[len(ROOT.parts)] not in ("recipes", "scripts")],   # users: they
                         # name kinds on the command line
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_tokenizer_kind_is_asked_of_the_kinds_only(path):
    """Everything else asks the loaded tokenizer (vocab/kinds/base.py) what it can do."""
    assert kind_switches(path) == [], f"{path.relative_to(ROOT)} asks which kind a tokenizer is"


def test_the_kind_rule_sees_switches(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('if spec.kind == "mecab" or isinstance(spec, (VocabSpec, x.TokenizerSpec)):\n'
                     '    model_type = "bytelevel-bpe"\n')
    assert len(kind_switches(probe)) == 4


def lazy_imports_without_a_reason(path: Path) -> list[str]:
    """Imports of the project's own modules inside a function with no comment saying why (on the
    import, within its group of imports, or on the line above the group)."""
    text = path.read_text(encoding="utf-8")
    lines, tree = text.splitlines(), ast.parse(text)
    here = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    found = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for body in (n.body for n in ast.walk(fn) if isinstance(getattr(n, "body", None), list)):
            group: list[ast.stmt] = []
            for stmt in [*body, None]:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    group.append(stmt)
                    continue
                own = [g for g in group if _is_own(g, here)]
                if own and not any("#" in lines[i] for i in range(group[0].lineno - 2, group[-1].end_lineno)):
                    found += [f"line {g.lineno}: {ast.unparse(g)}" for g in own]
                group = []
    return sorted(set(found))


def _is_own(node, here: str) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in PACKAGES
    return any(a.name.split(".")[0] in PACKAGES for a in node.names)


@pytest.mark.parametrize("path", list(modules()), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_our_modules_are_imported_at_the_top_or_say_why(path):
    """The import graph is what the tops of the modules say (no cycle hidden in a function): an
    import of ours inside a function stays only with a reason (a heavy library one command
    needs, `--help` staying instant), in a comment beside it."""
    assert lazy_imports_without_a_reason(path) == [], f"{path.relative_to(ROOT)}: an import without a reason"


def test_the_lazy_import_rule_sees_them(tmp_path):
    probe = ROOT / "vocab" / "probe_for_the_test.py"
    try:
        probe.write_text("def f():\n    from vocab.kinds import load_tokenizer\n    return 1\n\n\n"
                         "def g():\n    from vocab.kinds import load_vocab   # heavy: a reason\n")
        assert lazy_imports_without_a_reason(probe) == ["line 2: from vocab.kinds import load_tokenizer"]
    finally:
        probe.unlink()
