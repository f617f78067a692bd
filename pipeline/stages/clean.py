"""`pipeline clean --keep ...`: remove the pipeline's folders under DATA_DIR/LANG/ that you no
longer need, keeping the ones you name.

Usage:
    pipeline --lang uk clean --keep hdf5,vocab             # keep what training needs
    pipeline --lang uk clean --keep hdf5,vocab,download --dry-run
    clean(data_dir="data", lang="uk", keep=["hdf5", "vocab"])   # from Python

--keep takes stage names or their folders (download, extract/extracted, format/formatted,
ingest/ingested, dedup/deduped, split/sentences, filter/filtered, shard/sharded, vocab,
encode/hdf5 for every hdf5_... folder, probe, rejected, report for report.html), comma-separated;
`--keep none` removes them all. probe/ is kept by every other list, named or not: it is small,
`python -m trainer.finetune --probe` reads it, and rebuilding it needs extracted/ and
sentences/, the first folders a clean removes. Only those folders are ever removed: anything else in
DATA_DIR/LANG/ stays. A stage whose input was
removed cannot be rerun without redoing the stages before it (`pipeline run` does that).
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

import click

from pipeline.core.errors import StageError
from pipeline.core.registry import STAGES, lang_dir
from pipeline.core.report import human_bytes

log = logging.getLogger("pipeline")

REPORT_FILE = "report.html"
# --keep name -> what it keeps: a folder name, or a glob for encode's option-named folders
TARGETS = {s.name: s.output for s in STAGES if s.output}
TARGETS.update({s.output: s.output for s in STAGES if s.output},
               encode="hdf5_*", hdf5="hdf5_*", rejected="rejected", report=REPORT_FILE)


def parse_keep(value: str) -> set[str]:
    """'hdf5,vocab' -> the folder names or globs to keep; StageError naming an unknown one."""
    names = {v.strip() for v in value.split(",") if v.strip()}
    if names == {"none"}:
        return set()
    unknown = sorted(names - set(TARGETS))
    if unknown or not names:
        raise StageError(f"--keep {value!r}: {', '.join(unknown) or 'nothing'} is not one of "
                         f"{', '.join(sorted(TARGETS))} (comma-separated), or 'none'")
    return {TARGETS[n] for n in names} | {TARGETS["probe"]}   # the evaluation set stays


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def clean(data_dir="data", lang="hu", keep=(), dry_run=False) -> list[tuple[Path, int]]:
    """Remove the pipeline's outputs of DATA_DIR/LANG not matched by `keep` (folder names or
    globs, see TARGETS); return (path, bytes) of what was (or, dry_run, would be) removed."""
    folder = lang_dir(data_dir, lang)
    if not folder.is_dir():
        raise StageError(f"{folder} does not exist: nothing to clean (check --data-dir and --lang, "
                         "given before the stage name)")
    kept_patterns = set(keep)
    removed = []
    for pattern in sorted(set(TARGETS.values())):
        if pattern in kept_patterns:
            continue
        for path in sorted(folder.glob(pattern)):
            size = _size(path)
            removed.append((path, size))
            if not dry_run:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
    verb = "would remove" if dry_run else "removed"
    for path, size in removed:
        log.info("clean: %s %s (%s)", verb, path, human_bytes(size))
    log.info("clean: %s %d item%s, %s%s", verb, len(removed), "" if len(removed) == 1 else "s",
             human_bytes(sum(s for _, s in removed)),
             f"; kept {', '.join(sorted(kept_patterns))}" if kept_patterns else "")
    return removed


@click.command("clean")
@click.option("--keep", required=True,
              help="Folders to keep, comma-separated: stage names or folders (hdf5 = every "
                   "hdf5_... folder), e.g. hdf5,vocab; probe/ (what finetune --probe reads) is "
                   "always kept; 'none' removes every pipeline folder.")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.pass_obj
def command(g, keep, dry_run):
    """Remove the intermediate folders under DATA_DIR/LANG/ that you no longer need."""
    clean(data_dir=g.data_dir, lang=g.lang, keep=parse_keep(keep), dry_run=dry_run)
