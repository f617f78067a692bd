"""Two tokenizers side by side on the same held-out words.

Every tokenizer is measured on the same words (BERT's, or a segmenter's: each kind lays its
pieces over them, vocab/core/word_align.py), with the vocab report's figures
(vocab/reports/quality.py): pieces per word (all tokens / words), words kept whole (one piece
that covers the word, not the unknown token), and the unknown token's share of tokens and of
words. `compare_tokenizers` measures an old tokenizer (any folder vocab.kinds.load_tokenizer
reads) and a new one on the same held-out sentences: what `pipeline vocab --compare DIR`
prints, so a user sees whether adapting a model's vocabulary to the language is worth it.

Usage:
    rep = compare_tokenizers(old_spec, new_spec, sentences, source="test shards")
    print(format_comparison(rep))
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from vocab.reports.quality import measure


def describe(spec) -> dict:
    return {"folder": str(spec.folder), "kind": spec.piece_model, "vocab_size": spec.size,
            "fingerprint": spec.fingerprint, "lower_case": bool(spec.lower_case)}


def compare_tokenizers(old, new, sentences: Sequence[str], source: str = "",
                       segmenter: str | None = None) -> dict:
    """Both tokenizers measured on the same held-out words (see the module doc)."""
    out = {"eval_source": source, "sentences": len(sentences),
           **({"words_from": segmenter} if segmenter else {})}
    for name, spec in (("old", old), ("new", new)):
        groups = (g for _, g in spec.word_pieces(sentences, segmenter))
        out[name] = describe(spec) | measure(spec, groups, len(sentences))
    return out


def format_comparison(rep: dict) -> str:
    """The comparison as a small table for the screen."""
    old, new = rep["old"], rep["new"]

    def name(side):
        return f"{side['kind']}, {side['vocab_size']:,} pieces"

    rows = [
        ("", "old", "new"),
        ("tokenizer", _short(old["folder"]), _short(new["folder"])),
        ("kind, size", name(old), name(new)),
        ("pieces per word", f"{old['subwords_per_word']:.3f}", f"{new['subwords_per_word']:.3f}"),
        ("words kept whole", f"{100 * old['whole_word_share']:.2f}%", f"{100 * new['whole_word_share']:.2f}%"),
        ("unknown share of tokens", f"{100 * old['unk_token_share']:.4f}%", f"{100 * new['unk_token_share']:.4f}%"),
        ("unknown share of words", f"{100 * old['unk_word_share']:.4f}%", f"{100 * new['unk_word_share']:.4f}%"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [f"  held-out text: {rep.get('eval_source') or '-'}; {rep['sentences']:,} sentences, "
             f"{old['words']:,} words"]
    lines += [f"  {a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows]
    return "\n".join(lines)


def record_name(spec) -> str:
    """A file-name-safe name for a tokenizer: its folder's name."""
    return re.sub(r"[^A-Za-z0-9.-]+", "-", Path(spec.folder).resolve().name).strip("-.")[:60] or spec.piece_model


def _short(folder: str, width: int = 40) -> str:
    return folder if len(folder) <= width else "…" + folder[-(width - 1):]
