"""A time budget in words (--train_budget 30m / 2h / 1d), read the same by the trainer
(trainer/runtime/budget.py) and by `make pretrain`, which advises on it before training (torch-free).

    seconds = parse_budget("2h")     # 7200.0; BudgetError if unparseable
    budget_words(7200.0)             # "2h": the same budget as a user types it
"""
from __future__ import annotations

import re

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class BudgetError(ValueError):
    """--train_budget cannot be read; the message says what is accepted."""


def parse_budget(text: str) -> float:
    """'30m', '2h', '1d', '90s', '1.5h' -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise BudgetError(f"--train_budget {text!r} cannot be read: give a positive number and a "
                          "unit s, m, h or d, e.g. 30m, 2h, 1d")
    return float(m.group(1)) * UNITS[m.group(2)]


def budget_words(seconds: float) -> str:
    """The budget as a user types it: 300 -> '5m', 5400 -> '90m', 7200 -> '2h', 45 -> '45s'."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and abs(seconds / size - round(seconds / size)) < 1e-9:
            return f"{round(seconds / size)}{unit}"
    return f"{seconds:g}s"
