"""Figures in words, written once for the console, report.html and the model card, so that the
three say the same number.

    signed(0.02)            # "+0.020": 3 decimals, as report.html and the card write accuracies
    signed(0.0003)          # "+0.0003", not "+0.000": the context gain's sign must show
    signed(-0.00004)        # "-0.00004"
    signed(0.02, digits=4)  # "+0.0200": the console's lines, whose accuracies have 4
    plural(1, "column")     # "1 column"; plural(12345, "row") "12,345 rows"; plural(2, "copy", "copies")
    baseline_text(heldout)  # "0.214 against 0.061 for the unigram baseline (always 'the'): 3.5x ..."
"""
from __future__ import annotations

import math


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


def baseline_text(r: dict) -> str:
    """A held-out masked-LM accuracy against the unigram baseline, from heldout_mlm.json's record
    (recipes/heldout_mlm.py): '0.214 against 0.061 for the unigram baseline (always 'the'): 3.5x
    the baseline, on 12,345 tokens of held-out rows' (report.html and the model card)."""
    acc, base = float(r["accuracy"]), float(r["unigram_accuracy"])
    ratio = f"{acc / base:.1f}x the baseline" if base else "the baseline guesses nothing right"
    return (f"{acc:.3f} against {base:.3f} for the unigram baseline (always '{r.get('unigram_token')}'): "
            f"{ratio}, on {r.get('tokens', 0):,} tokens of held-out rows")
