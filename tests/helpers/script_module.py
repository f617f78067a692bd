"""Import a bench script (bench/ is not a package) as a module, by its path. scripts/ is never
loaded this way: its entries hand over to the recipes package, its tools are run as commands."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script(relative_path: str):
    """`load_script("bench/run_all.py")`: the module, registered as wiki2bert_<stem>."""
    path = ROOT / relative_path
    spec = importlib.util.spec_from_file_location(f"wiki2bert_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
