"""`pipeline` — the command line of wiki2bert's data pipeline.

Usage:
    pipeline [--data-dir DIR] [--lang CODE] [--workers N] [--scheduler ADDRESS] STAGE [options]
    pipeline --lang hu run --dump data/sample/huwiki-sample.xml.bz2
    pipeline --scheduler tcp://10.0.0.5:8786 --lang hu run    # tasks on a Dask cluster
    pipeline --lang uk extract --input dump.xml.bz2 --output /tmp/extracted
    pipeline --lang hr,sr,bs run --dump hr=hrwiki.xml.bz2 --dump sr=... --dump bs=...

Each stage reads its predecessor's finished output under DATA_DIR/LANG/ unless given
--input/--output; `pipeline STAGE --help` explains a stage. The stages, their order and their
folders come from the registry (pipeline/core/registry.py).
"""
from __future__ import annotations

import difflib
import importlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from common.interrupt import say_interrupted

from .core.errors import StageError
from .core.executor import default_workers, use_scheduler
from .core.os_errors import describe, is_data_error
from .core.registry import BY_NAME, STAGES, validate_langs
from .core.report import DEFAULT_PROGRESS_EVERY, PROGRESS_EVERY_ENV, set_progress_every

INTERRUPTED = ("Interrupted: rerun the same command to go on: finished tasks are kept and "
               "skipped, the interrupted ones start again")


@dataclass
class Globals:
    """The options given before the stage name, handed to every stage command."""

    data_dir: Path
    lang: str
    workers: int
    langs: tuple[str, ...] = ()   # --lang hr,sr,bs: every code (only `run`, `joint-vocab` take several)

    @property
    def languages(self) -> tuple[str, ...]:
        return self.langs or (self.lang,)

    def kwargs(self) -> dict:
        return {"data_dir": self.data_dir, "lang": self.lang, "workers": self.workers}


class StageGroup(click.Group):
    """Loads stage commands lazily (a stage's module is imported only when it runs: start-up
    stays short and one stage never loads another's libraries), and turns the user-facing
    errors of a stage into one clear line, never a traceback."""

    def list_commands(self, ctx):
        return [s.name for s in STAGES]

    def get_command(self, ctx, name):
        stage = BY_NAME.get(name)
        if stage is None:
            return None
        return importlib.import_module(stage.module).command

    def resolve_command(self, ctx, args):
        """`pipeline extarct`: click's "No such command" plus the stage meant."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if args and "No such command" in exc.message:
                close = difflib.get_close_matches(args[0], [s.name for s in STAGES], n=1, cutoff=0.6)
                if close:
                    exc.message += f" Did you mean {close[0]!r}? (`pipeline --help` lists the stages)"
            raise

    def format_commands(self, ctx, formatter):
        """The stages in pipeline order with the registry's one-line summaries (no imports)."""
        with formatter.section("Stages, in the order `pipeline run` runs them"):
            formatter.write_dl([(s.name, s.summary) for s in STAGES if s.in_run])
        with formatter.section("Other commands"):
            formatter.write_dl([(s.name, s.summary) for s in STAGES if not s.in_run])

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:
            # `pipeline run --lang el`: say where a global option goes
            option = next((p for p in self.params if exc.option_name in p.opts), None)
            if option is not None:
                stage = exc.ctx.info_name if exc.ctx is not None else "STAGE"
                value = "" if option.is_flag else f" {option.metavar or option.name.upper()}"
                exc.message = (f"No such option {exc.option_name} for `{stage}`: global options "
                               f"go before the stage name: pipeline {exc.option_name}{value} "
                               f"{stage} ...")
            raise
        except StageError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:  # a full disk, a read-only one, ...: one line (core/os_errors.py)
            if is_data_error(exc):
                raise click.ClickException(describe(exc, ctx.invoked_subcommand)) from None
            if isinstance(exc, IsADirectoryError):
                raise click.ClickException(f"{exc}") from None
            raise
        except UnicodeDecodeError as exc:
            raise click.ClickException(f"{exc}") from None
        except KeyboardInterrupt:   # Ctrl-C: one line, not click's "Aborted!" after tracebacks
            say_interrupted(INTERRUPTED)
            raise click.exceptions.Exit(130) from None


def _check_lang(ctx, param, value):
    """One code, or several separated by commas (a tuple then)."""
    try:
        langs = validate_langs(value)
    except StageError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[-1] + f" (got {value!r})") from None
    return langs[0] if len(langs) == 1 else langs


def _one_lang_only(stage: str | None, langs: tuple[str, ...]) -> None:
    """A UsageError when several languages are given to a stage that works on one."""
    if stage in BY_NAME and not BY_NAME[stage].several_langs:
        several = ", ".join(f"`{s.name}`" for s in STAGES if s.several_langs)
        raise click.UsageError(
            f"`pipeline {stage}` works on one language, not --lang {','.join(langs)}: give one "
            f"(pipeline --lang {langs[0]} {stage} ...); several languages are for {several}")


@click.group(cls=StageGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("data"),
              show_default=True, help="Root of the data directory; stages work in DATA_DIR/LANG/.")
@click.option("--lang", default="hu", show_default=True, callback=_check_lang,
              help="Wikipedia language code (hu, uk, vi, zh, simple, ...); several, comma-separated "
                   "(hr,sr,bs), for `run` and `joint-vocab`.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--scheduler", envvar="WIKI2BERT_SCHEDULER", default=None, metavar="ADDRESS",
              help="Run the stages' tasks on the Dask cluster at ADDRESS (tcp://host:8786, or a "
                   "scheduler .json file); 'local' starts one here with --workers processes "
                   "[default: $WIKI2BERT_SCHEDULER, else a local process pool]. See docs/cluster.md.")
@click.option("-q", "--quiet", is_flag=True, help="Only warnings and errors.")
@click.option("--progress-every", type=click.FloatRange(min=0), envvar=PROGRESS_EVERY_ENV,
              default=DEFAULT_PROGRESS_EVERY, show_default=True, metavar="SECONDS",
              help="When stderr is not a terminal (a log file, a pipe), a plain progress line at "
                   f"most this often instead of a bar [also ${PROGRESS_EVERY_ENV}].")
@click.pass_context
def cli(ctx, data_dir, lang, workers, scheduler, quiet, progress_every):
    """wiki2bert data pipeline: a Wikipedia dump in any language to BERT pretraining data.

    `pipeline run` chains the stages below. Every stage resumes where it stopped, skips
    finished work, and refuses changed options unless --force. Global options go before the
    stage name: `pipeline --lang el run`.
    """
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="%(message)s", stream=sys.stderr, force=True)
    set_progress_every(progress_every)
    langs = lang if isinstance(lang, tuple) else ()
    if langs:
        _one_lang_only(ctx.invoked_subcommand, langs)
    ctx.obj = Globals(data_dir=data_dir, lang=langs[0] if langs else lang,
                      workers=default_workers(workers), langs=langs)
    if scheduler:  # connect now: an unreachable scheduler fails before any stage writes
        ctx.with_resource(use_scheduler(scheduler, ctx.obj.workers))


def main() -> None:
    cli(prog_name="pipeline")


if __name__ == "__main__":
    main()
