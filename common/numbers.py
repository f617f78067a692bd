"""Figures in words, written once for the console, report.html and the model card, so that the
three say the same number.

    signed(0.02)            # "+0.020": 3 decimals, as report.html and the card write accuracies
    signed(0.0003)          # "+0.0003", not "+0.000": the context gain's sign must show
    signed(-0.00004)        # "-0.00004"
    signed(0.02, digits=4)  # "+0.0200": the console's lines, whose accuracies have 4
    plural(1, "column")     # "1 column"; plural(12345, "row") "12,345 rows"; plural(2, "copy", "copies")
    baseline_text(heldout)  # "0.214 ± 0.009 against 0.061 for the unigram baseline (always 'the'): 3.5x ..."
    ratio_error(heldout)    # " (± 0.2)", " (± 0.04)" under 0.1: an error never shown as 0.0
"""
from __future__ import annotations

import math

from common.heldout_file import EVERY_TOKEN


def signed(value: float, digits: int = 3) -> str:
    """`value` with its sign and `digits` decimals, more where fewer would round a nonzero value
    to zero (a gain of +0.00004 is not "+0.0000": whether a model reads its context is the sign)."""
    if not math.isfinite(value):
        return f"{value:+}"
    text = f"{value:+.{digits}f}"
    while value and not any(c in "123456789" for c in text) and digits < 9:
        digits += 1
        text = f"{value:+.{digits}f}"
    return text


def plural(n: int, word: str, words: str | None = None) -> str:
    """`n` with its thousands separated and `word` in the number `n` asks for ("1 rank", "2 ranks"),
    `words` where the plural is not word + "s"."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def ratio_error(r: dict) -> str:
    """The standard error of a held-out record's ratio to the unigram baseline, in brackets (""
    for a record without one)."""
    if "ratio_standard_error" not in r:
        return ""
    se = float(r["ratio_standard_error"])
    return f" (± {se:.1f})" if se >= 0.1 else f" (± {se:.2f})"


def baseline_text(r: dict) -> str:
    """A held-out masked-LM accuracy against the unigram baseline, from heldout_mlm.json's record
    (recipes/heldout_mlm.py): '0.214 ± 0.009 against 0.061 for the unigram baseline (always 'the'):
    3.5x (± 0.2) the baseline, every token masked once as [MASK], on 4,102 tokens of 33 of 188
    held-out rows (a seeded sample)' (report.html and the model card; a record of before issue 60
    has no standard error and no sample)."""
    acc, base = float(r["accuracy"]), float(r["unigram_accuracy"])
    se = f" ± {float(r['standard_error']):.3f}" if "standard_error" in r else ""
    ratio = f"{acc / base:.1f}x{ratio_error(r)} the baseline" if base else "the baseline guesses nothing right"
    rows, held_out = r.get("rows"), r.get("rows_held_out")
    where = (f"{rows:,} of {held_out:,} held-out rows ({'a seeded sample' if r.get('max_tokens') else 'the first'})"
             if isinstance(rows, int) and isinstance(held_out, int) and rows < held_out else "held-out rows")
    return (f"{acc:.3f}{se} against {base:.3f} for the unigram baseline (always '{r.get('unigram_token')}'): "
            f"{ratio}, {EVERY_TOKEN}, on {r.get('tokens', 0):,} tokens of {where}")
