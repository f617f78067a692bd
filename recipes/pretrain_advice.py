"""What `make pretrain` (recipes/pretrain.py) says besides running its steps: the command to
rerun, in the form the user typed (make's variables or the script's flags), the checks of
--dump and --lang before any step, and how long the probe would take where it is skipped.

    rerun_command(["--lang", "ja", "--dump", "ja.xml.bz2"], force=True)
    # 'python -m recipes.pretrain --lang ja --dump ja.xml.bz2 --force' (as it was started), or under make:
    # "make pretrain LANG=ja DUMP=ja.xml.bz2 PRETRAIN_OPTS=--force"
    input_problem(args)       # "--dump data/ is a folder: ..." or None
    probe_estimate(run_dir, train_sentences, device="cpu")   # "about 9 minutes" or ""
    long_budget_warning("cpu", "5m")   # "--long on a CPU with BUDGET=5m: ..." or ""

The Makefile's pretrain recipe sets WIKI2BERT_VIA_MAKE=pretrain (common/make_vars.py): the
script then names make's variables (LANG, DUMP, BUDGET, DATA_DIR, WORKERS,
CORPORA) and PRETRAIN_OPTS for
the rest; otherwise the command as it was started (typed_command).
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from common.budget import BudgetError, parse_budget
from common.flags import started_as
from common.make_vars import MAKE_VARS, as_typed, make_target
from common.numbers import plural
from pipeline.core.errors import StageError
from pipeline.core.registry import validate_lang
from pipeline.stages.download import check_wiki
from recipes import web_corpora
from recipes.demo_probe import EPOCHS, probe_runs
from recipes.long_recipe import CPU_MEASURED, CPU_MIN_BUDGET
from trainer.finetune.plan import CPU_TRAIN_LIMIT

MAKE_DEFAULTS = {"BUDGET": "30m", "DATA_DIR": "data"}
DUMP_NAME = re.compile(r"\.xml(\.(bz2|xz|gz))?$")


def via_make() -> bool:
    return make_target() is not None


def typed_command() -> str:
    """This command as the user started it (common/flags.py: python -m recipes.pretrain, python
    scripts/pretrain.py, wiki2bert-pretrain)."""
    return started_as("recipes.pretrain", "wiki2bert-pretrain")


def rerun_command(argv: list[str], force: bool = False) -> str:
    """The command that goes on from where this one stopped; with `force`, the one that redoes
    it (--force is dropped otherwise: it would start the finished steps and training over)."""
    argv = [str(x) for x in argv if str(x) != "--force"] + (["--force"] if force else [])
    if not via_make():
        return f"{typed_command()} {shlex.join(argv)}"
    given, rest, i = {}, [], 0
    while i < len(argv):
        flag, eq, value = argv[i].partition("=")
        if flag in MAKE_VARS:
            if not eq:
                value, i = (argv[i + 1] if i + 1 < len(argv) else ""), i + 1
            given[MAKE_VARS[flag]] = value   # the last one wins, as in argparse
        else:
            rest.append(argv[i])
        i += 1
    words = ["make pretrain"] + [f"{k}={shlex.quote(given[k])}" for k in MAKE_VARS.values()
                                 if k in given and MAKE_DEFAULTS.get(k) != given[k]]
    if rest:
        words.append(f"PRETRAIN_OPTS={shlex.quote(shlex.join(rest))}")
    return " ".join(words)


def input_problem(a) -> str | None:
    """What is wrong with --dump, --lang or --corpora, in one line, before any step runs (no rerun
    can help: the command must change)."""
    if a.dump is not None:
        if a.dump.is_dir():
            found = sorted(p.name for p in a.dump.iterdir() if p.is_file() and DUMP_NAME.search(p.name))
            example = (f", e.g. {as_typed('--dump', a.dump / found[0])}" if found else
                       " (a .xml, .xml.bz2, .xml.xz or .xml.gz file from dumps.wikimedia.org)")
            return f"{as_typed('--dump', a.dump)} is a folder: give the dump file itself{example}"
        if not a.dump.is_file():
            return f"{as_typed('--dump', a.dump)} does not exist"
    try:
        if getattr(a, "allow_unknown_lang", False):   # `pipeline download` takes the code as it is
            validate_lang(a.lang)
        else:
            check_wiki(a.lang, a.dump, use=as_typed("--lang", "{code}"))
        web_corpora.check(a)   # --corpora located for the language (offline: cached)
    except StageError as exc:
        return str(exc)
    return None


PROBE_SEQ = 128   # the probe fine-tunes on rows of up to 128 tokens (trainer.finetune's default)


def probe_estimate(run_dir: Path, train_sentences: int, device: str) -> str:
    """'about 12 minutes': the probe's fine-tuning (random init and pretrained, each seed) at
    the pace the run trained its probe-length rows at; "" without a logged pace. A phased run
    (--long) ends on long rows, far slower a row than the probe's: its pace is read from the
    phase on the shortest rows (phase_start records say each phase's seq_len), and scaled by
    the tokens a row where even those are longer than the probe's."""
    pace = pace_by_seq_len(Path(run_dir) / "train_log.jsonl")
    if not pace or train_sentences <= 0:
        return ""
    seq_len = min(pace, key=lambda n: (n is None, n or 0))   # None: the run names no phases
    rows_per_sec = pace[seq_len] * (max(1.0, seq_len / PROBE_SEQ) if seq_len else 1.0)
    rows = min(train_sentences, CPU_TRAIN_LIMIT) if device == "cpu" else train_sentences
    runs = probe_runs()
    minutes = runs * rows * EPOCHS / rows_per_sec / 60   # a rough figure: said in whole minutes or hours
    return (f"about {minutes / 60:.1f} hours" if minutes >= 90 else
            f"about {plural(max(1, round(minutes)), 'minute')}")


def pace_by_seq_len(log: Path) -> dict:
    """{seq_len: the last samples/s logged on rows of that length} from a train_log.jsonl;
    the key is None for the steps before any phase_start record (an unphased run)."""
    pace, seq_len = {}, None
    if not log.is_file():
        return pace
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            if "phase_start" in record:
                seq_len = int(record["seq_len"])
            elif float(record.get("samples_per_sec") or 0) > 0:
                pace[seq_len] = float(record["samples_per_sec"])
        except (ValueError, AttributeError, KeyError, TypeError):
            continue
    return pace


def cpu_budget_below(device: str, budget: str, minimum: str) -> bool:
    """A CPU run's budget under `minimum`; False on a GPU and for a budget the trainer will refuse
    (its own error says why)."""
    try:
        return device == "cpu" and parse_budget(budget) < parse_budget(minimum)
    except BudgetError:
        return False


def long_budget_warning(device: str, budget: str) -> str:
    """One line where --long on a CPU is given less time than it needs to pay (CPU_MIN_BUDGET,
    measured: recipes/long_recipe.py); "" otherwise, and for a budget the trainer will refuse."""
    if not cpu_budget_below(device, budget, CPU_MIN_BUDGET):
        return ""
    return (f"warning: --long on a CPU with {as_typed('--budget', budget)}: below {CPU_MIN_BUDGET} the model "
            f"stays near word frequencies (measured on uk: {CPU_MEASURED}) and its long phases gave no "
            f"context gain, nor up to {CPU_MIN_BUDGET} (docs/training.md); leave --long out, or give "
            f"{as_typed('--budget', CPU_MIN_BUDGET)} or more")
