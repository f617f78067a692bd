"""A misspelled flag or choice, answered with the one meant: `--bugdet` -> "did you mean
--budget?", `--task nerr` -> "did you mean --task ner?".

    hint = close_flag(parser, "unrecognized arguments: --bugdet 10m")   # "; did you mean --budget?"
    close_flag(parser, "argument --task: invalid choice: 'nerr' (choose from 'ner', 'pos')")
    # "; did you mean --task ner?"
    p = HintingParser(prog="python -m recipes.pretrain")   # argparse's error as one line + the hint
    started_as("recipes.demo", "wiki2bert-demo")   # "python scripts/demo.py" where that started it

The trainer's parser (trainer/config/flags.py), fine-tuning's (trainer/finetune/cli.py) and the
recipes' (recipes/pretrain.py, recipes/demo.py) answer the same way; the pipeline's click
commands have click's own.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path


def close_flag(parser: argparse.ArgumentParser, message: str) -> str:
    """"; did you mean --budget?" when `message` (argparse's) names an unknown flag close to one
    of `parser`'s, "; did you mean --task ner?" for a choice close to one of the flag's, else ""."""
    choice = re.match(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)$", message)
    if choice:
        given, options = choice.group(2), re.findall(r"'([^']*)'", choice.group(3))
        close = ([o for o in options if o.startswith(given)] if given else []) or \
            difflib.get_close_matches(given, options, n=1, cutoff=0.6)
        return f"; did you mean {choice.group(1)} {close[0]}?" if close else ""
    found = re.match(r"unrecognized arguments: (\S+)", message)
    if not found:
        return ""
    flag = found.group(1).split("=")[0]
    options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    close = difflib.get_close_matches(flag, options, n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


class HintingParser(argparse.ArgumentParser):
    """argparse's usage error as one `Error: ...` line, with the flag meant, exit status 2."""

    def error(self, message):
        print(f"Error: {message}{close_flag(self, message)} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def started_as(module: str, console: str = "") -> str:
    """This command as the user started it, for its usage line and its advice: a checkout's thin
    entry `python scripts/NAME.py`, the installed `console` script, else `python -m MODULE`
    (what make runs)."""
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    name = module.rsplit(".", 1)[-1]
    if console and started.name == console:
        return console
    if started.name == f"{name}.py" and started.parent.name == "scripts":
        return f"python scripts/{name}.py"
    return f"python -m {module}"
