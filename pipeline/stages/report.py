"""`pipeline report`: one HTML page that shows whether the corpus is good, and where it is not.

Usage:
    pipeline --lang uk report                                # -> data/uk/report.html
    pipeline --lang uk report --run runs/uk_p1 --run runs/uk_p2
    pipeline --lang uk report --run runs/uk_p1 --downstream runs/uk_p1_pos/results.json
    write_report_stage(data_dir="data", lang="uk", runs=["runs/uk_p1"])   # from Python

Reads the finished stages' manifests under DATA_DIR/LANG/ and bounded samples of their outputs
(it never changes them) and writes DATA_DIR/LANG/report.html: self-contained (pictures inline,
no network), sections with stable ids: funnel, rejections, quality, vocab, hdf5, training,
downstream (the probe scores of a run's checkpoints after fine-tuning: RUN_DIR/downstream/
results.json, as the fine-tuning CLI writes it, and the results.json given with --downstream;
a benchmark suite's folder or suite.json, `trainer.finetune --suite`'s, is shown as its table).
Where a stage lost an unusual share of its input, the page (and this command) says so in red.
`pipeline run` ends with this stage. The page is rewritten each time (it takes seconds), with
the runs and results an earlier report of the same page showed (recorded in the page;
`--forget-runs` leaves them out), so a rerun of `pipeline run` keeps its training sections.
"""
from __future__ import annotations

import logging
from pathlib import Path

import click

from common.atomic import remove_stale_temporaries
from pipeline.core.errors import StageError
from pipeline.core.registry import lang_dir

log = logging.getLogger("pipeline")


def write_report_stage(data_dir="data", lang="hu", runs=(), output=None, downstream=(),
                       forget_runs=False) -> Path:
    """Write the report of DATA_DIR/LANG (plus trainer output dirs `runs` and fine-tuning
    results.json files or their folders `downstream`, and those an earlier report of the same
    page showed unless `forget_runs`); return its path."""
    from pipeline.report.build import write_report  # matplotlib loads only for a report
    from pipeline.report.remembered import merged, remembered

    folder = lang_dir(data_dir, lang)
    if not folder.is_dir():
        raise StageError(f"{folder} does not exist: run `pipeline --lang {lang} run` first "
                         "(or give the right --data-dir and --lang before the stage name)")
    for run in runs:
        if not Path(run).is_dir():
            raise StageError(f"--run {run} is not a folder: give a trainer --output_dir")
    for given in downstream:
        if not Path(given).exists():
            raise StageError(f"--downstream {given} does not exist: give a results.json of the "
                             "fine-tuning CLI or the folder holding it")
    target = Path(output) if output else folder / "report.html"
    remove_stale_temporaries(target.parent, target.name)   # what a killed report left
    earlier_runs, earlier_downstream = ([], []) if forget_runs else remembered(target)
    runs, downstream = merged(list(runs), earlier_runs), merged(list(downstream), earlier_downstream)
    if earlier_runs or earlier_downstream:
        log.info("report: showing again the runs and results an earlier report showed "
                 "(--forget-runs to leave them out)")
    path, warnings = write_report(folder, lang, runs, output, downstream)
    for w in warnings:
        log.warning("report: warning: %s", w)
    log.info("report: %s (%d warning%s)", path, len(warnings), "" if len(warnings) == 1 else "s")
    return path


@click.command("report")
@click.option("--run", "runs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="A trainer --output_dir whose curves (and downstream/results.json) to show; "
                   "repeat for several.")
@click.option("--downstream", multiple=True, type=click.Path(path_type=Path),
              help="A fine-tuning results.json or a suite's suite.json (its table), or the "
                   "folder holding it, to show beside the runs' own; repeat for several.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The HTML file [default: DATA_DIR/LANG/report.html].")
@click.option("--forget-runs", is_flag=True,
              help="Leave out the runs and results an earlier report of this page showed "
                   "[default: show them again, with any --run/--downstream given].")
@click.pass_obj
def command(g, runs, output, downstream, forget_runs):
    """Write report.html: what each stage kept and lost, with pictures, in one page."""
    write_report_stage(data_dir=g.data_dir, lang=g.lang, runs=runs, output=output,
                       downstream=downstream, forget_runs=forget_runs)
