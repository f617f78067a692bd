"""The model card's line on how often the run read its text (trainer/start/passes.py counted it):
what the run read by its end (train_log.jsonl's last training record, `passes_read`), else what its
plan meant to (hparams.json, `passes`), per source with its weight, and a note past 4 passes.

    row = passes_row(hparams, last_train_record)   # "\n| passes over the text | ... |" or ""
"""
from __future__ import annotations

MAX_PASSES = 4   # trainer/start/passes.py's (Muennighoff et al. 2023); export does not import the start


def _times(p: float) -> str:
    return f"{p:,.0f}" if p >= 100 else f"{p:.1f}" if p >= 1 else f"{p:.2f}"


def passes_row(hp: dict, last: dict) -> str:
    """The card's row ("" for a run from before passes were counted, or one with nothing to count by)."""
    key = "passes_read" if last.get("passes_read") is not None else "passes"
    record = last if key == "passes_read" else hp
    if record.get(key) is None:
        return ""
    how = "read by the end of the run" if key == "passes_read" else "planned (the run's end was not logged)"
    read, text = record.get(f"{key}_tokens"), record.get("text_tokens")
    tokens = f", {read:,} tokens read of a text of {text:,}" if read is not None and text else ""
    sources = record.get(f"{key}_by_source") or {}
    each = "; " + ", ".join(f"{name} {_times(s['passes'])}" + (f" (weight {s['weight']:g})" if s["weight"] != 1 else "")
                            + (f" of {s['tokens']:,} tokens" if s.get("tokens") else "")
                            for name, s in sources.items()) if len(sources) > 1 else ""
    most = record.get(f"{key}_most", record[key])
    note = (f"; past about {MAX_PASSES} passes repeated text teaches little (Muennighoff et al. 2023)"
            if most > MAX_PASSES else "")
    return f"\n| passes over the text | {_times(record[key])}, {how}{tokens}{each}{note} |"
