"""The joint vocabulary's report on the screen: per language its shares, and the joint vocab's
figures against its own vocab's (pipeline joint-vocab's joint_report.json).

Usage:
    print(format_joint_table(rep))
"""
from __future__ import annotations


def format_joint_table(rep: dict) -> str:
    """The joint report (pipeline joint-vocab's joint_report.json) as a table for the screen:
    per language its shares, and the joint vocab's figures against its own vocab's."""

    def pair(lang: dict, key: str, fmt) -> str:
        own = lang.get("own")
        return f"{fmt(lang['joint'][key])} ({fmt(own[key]) if own else '-'})"

    def pct(digits):
        return lambda v: f"{100 * v:.{digits}f}%"

    rows = [("language", "text share", "sample share", "pieces/word", "words whole", "[UNK] words",
             "own vocab size")]
    for code, lang in rep["languages"].items():
        own = lang.get("own")
        rows.append((code, f"{100 * lang['text_share']:.1f}%", f"{100 * lang['sample_share']:.1f}%",
                     pair(lang, "subwords_per_word", lambda v: f"{v:.3f}"),
                     pair(lang, "whole_word_share", pct(1)), pair(lang, "unk_word_share", pct(3)),
                     f"{own['vocab_size']:,}" if own else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    return "\n".join([f"  joint vocab {rep['vocab_size']:,} pieces, sampling alpha "
                      f"{rep['settings']['sampling_alpha']:g}; figures: joint (own)", *lines])
