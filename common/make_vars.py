"""A setting named as the user gave it: through make's variables (`make corpus LANG=uk DUMP=x`,
`make pretrain ... PRETRAIN_OPTS=--force`) or as a flag, so that an error's advice is one the
command the user typed takes.

    as_typed("--dump", "PATH")           # "DUMP=PATH" under make, else "--dump PATH"
    as_typed("--allow-unknown-lang")     # "PRETRAIN_OPTS=--allow-unknown-lang" under make pretrain
    make_target()                        # "pretrain", "corpus" or None (not under make)

The Makefile's recipes set WIKI2BERT_VIA_MAKE to their target (pretrain, corpus; "1" is read as
pretrain, what its recipe set before); the commands they run inherit it, so the pipeline's own
messages name make's variables too. A flag make has no variable for goes in the target's
TARGET_OPTS.
"""
from __future__ import annotations

import os
import shlex

VIA_MAKE_ENV = "WIKI2BERT_VIA_MAKE"
# a flag -> the make variable the Makefile's recipes pass it from
MAKE_VARS = {"--lang": "LANG", "--dump": "DUMP", "--budget": "BUDGET", "--data-dir": "DATA_DIR",
             "--workers": "WORKERS", "--corpora": "CORPORA"}


def make_target() -> str | None:
    """The make target this process runs under, or None."""
    value = os.environ.get(VIA_MAKE_ENV, "").strip()
    return {"1": "pretrain"}.get(value, value) or None


def as_typed(flag: str, value: str = "") -> str:
    """`flag` with `value` as the user gives it here (see the module docstring)."""
    target = make_target()
    if target is None:
        return f"{flag} {value}".strip()
    if flag in MAKE_VARS:
        return f"{MAKE_VARS[flag]}={value}"
    return f"{target.upper()}_OPTS={shlex.quote(f'{flag} {value}'.strip())}"
