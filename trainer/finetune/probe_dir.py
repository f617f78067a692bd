"""Where `--probe` points: the probe files `pipeline probe` wrote, or what to run to get them.

Usage:
    files = probe_files("data/hu")         # {"train": data/hu/probe/train.conll, ...}
    # raises ProbeMissing("no probe at ...: run `pipeline --data-dir data --lang hu probe`")

`--probe` takes DATA_DIR/LANG (the folder `pipeline` writes its stages into); the probe folder
itself is taken too. Given another folder of the pipeline's (data/hu/vocab, an hdf5_... set),
the language folder is the nearest one up that holds the pipeline's folders, so the suggested
command names the language (hu), never the folder given (vocab).
"""
from __future__ import annotations

import re
from pathlib import Path

SPLITS = {"train": "train.conll", "validation": "dev.conll", "test": "test.conll"}
# folders `pipeline` writes under DATA_DIR/LANG (the layout contract of docs/pipeline.md)
LANG_DIR_MARKS = ("probe", "vocab", "sharded", "filtered", "sentences", "formatted", "extracted",
                  "download", "report.html")


LANG_CODE = re.compile(r"^[a-z][a-z0-9]{1,11}(?:[-_][a-z0-9]{1,11}){0,3}$")   # pipeline's rule


class ProbeMissing(ValueError):
    """No probe files where --probe points; the message says what to run."""


def _files(folder: Path) -> dict[str, Path]:
    return {split: folder / name for split, name in SPLITS.items()}


def language_folder(path: Path) -> Path | None:
    """The nearest of `path` and its parents that holds the pipeline's folders (DATA_DIR/LANG)."""
    path = path.resolve()
    for candidate in (path, *list(path.parents)[:3]):
        if any((candidate / mark).exists() for mark in LANG_DIR_MARKS) or \
                any(candidate.glob("hdf5_*")):
            return candidate
    return None


def probe_files(probe: str | Path) -> dict[str, Path]:
    """{"train", "validation", "test"} conll paths for `--probe PROBE`, or ProbeMissing."""
    given = Path(probe)
    for folder in (given / "probe", given):
        files = _files(folder)
        if all(f.is_file() for f in files.values()):
            return files
    lang_dir = language_folder(given)
    if lang_dir is None and LANG_CODE.match(given.name):   # nothing there yet: DATA_DIR/LANG
        lang_dir = given.resolve()
    if lang_dir is None:
        raise ProbeMissing(f"no probe at {given / 'probe'}: --probe takes DATA_DIR/LANG, the folder "
                           "`pipeline` writes its stages into (e.g. data/hu)")
    shown = lang_dir if given.is_absolute() else Path(_relative(lang_dir))
    missing = next(f for f in _files(lang_dir / "probe").values() if not f.is_file())
    return_cmd = f"pipeline --data-dir {shown.parent} --lang {lang_dir.name} probe"
    where = "" if lang_dir == given.resolve() else f"--probe takes DATA_DIR/LANG ({shown}); "
    raise ProbeMissing(f"no probe at {shown / 'probe'} ({missing.name} missing): {where}run "
                       f"`{return_cmd}` first")


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
