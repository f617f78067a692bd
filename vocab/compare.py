"""Words of any tokenizer, and two tokenizers side by side on the same held-out words.

The vocab report (vocab/report.py) counts BERT's words: what BERT's normaliser and basic
pre-tokenizer split (whitespace, each punctuation mark, each CJK character), or a segmenter's
words. A transformers tokenizer splits text its own way (a byte-level BPE keeps ")," together,
XLM-R's Metaspace keeps "word," together), so its pieces are laid over those same words by
their character offsets: a token belongs to the word its first non-space character is in (a
lone "▁" or "Ġ" before a word to that word). Every tokenizer is then measured on the same
words: pieces per word (all tokens / words), words kept whole (one piece that covers the
word, not the unknown token), and the unknown token's share of tokens and of words.

`compare_tokenizers` measures an old tokenizer (any folder load_tokenizer_spec reads) and a new
one on the same held-out sentences: what `pipeline vocab --compare DIR` prints, so a user sees
whether adapting a model's vocabulary to the language is worth it.

Usage:
    for text, groups in aligned_word_pieces(spec, sentences):   # [(word, [ids]), ...]
    rep = compare_tokenizers(old_spec, new_spec, sentences, source="test shards")
    print(format_comparison(rep))
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import Path

MAX_UNK_EXAMPLES = 20


def _bert_word_splitter():
    """A tokenizer whose tokens are BERT's words (cased, accents kept), with offsets into the
    original text."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from .normalizer import make_normalizer

    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = make_normalizer(lower_case=False, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def word_spans(sentences: Sequence[str], segmenter=None) -> list[list[tuple[int, int]]]:
    """(start, end) of each word of each sentence: BERT's words, or the segmenter's."""
    if segmenter is not None:
        return [segmenter.spans(s) for s in sentences]
    encs = _bert_word_splitter().encode_batch(list(sentences), add_special_tokens=False)
    return [list(e.offsets) for e in encs]


def aligned_word_pieces(spec, sentences: Sequence[str], segmenter: str | None = None,
                        batch_size: int = 1000):
    """(text, [(word text, ids), ...]) per sentence: the tokenizer's pieces of each word (see
    the module doc), for any spec with `backend()` (a TokenizerSpec)."""
    seg = None
    if segmenter is not None:
        from .segmenters import load_segmenter

        seg = load_segmenter(segmenter)
    tok = spec.backend()
    for start in range(0, len(sentences), batch_size):
        batch = list(sentences[start:start + batch_size])
        spans_of = word_spans(batch, seg)
        for text, spans, enc in zip(batch, spans_of, tok.encode_batch(batch, add_special_tokens=False)):
            yield text, _assign(text, spans, enc.ids, enc.offsets)


def _assign(text: str, spans, ids, offsets) -> list[tuple[str, list[int], bool]]:
    """Each word's pieces; the bool: one piece covers the whole word."""
    if not spans:
        return [(text, list(ids), len(ids) == 1)] if ids else []
    ends = [b for _, b in spans]
    groups: list[list[int]] = [[] for _ in spans]
    covers = [False] * len(spans)
    last = len(spans) - 1
    for tid, (a, b) in zip(ids, offsets):
        p = a
        while p < b and text[p].isspace():
            p += 1
        w = min(bisect_right(ends, p if p < b else b), last)
        groups[w].append(tid)
        covers[w] = b >= spans[w][1] and a <= spans[w][0]
    return [(text[a:b], g, c and len(g) == 1) for (a, b), g, c in zip(spans, groups, covers)]


def measure(spec, groups_per_sentence, n_sentences: int) -> dict:
    """The report's figures over (word, ids[, covered]) groups; words kept whole: one piece
    (that covers the word, where that is known), not the unknown token."""
    unk_id = spec.unk_id
    words = tokens = unk_tokens = unk_words = whole = 0
    unk_examples: list[str] = []
    for groups in groups_per_sentence:
        for word, ids, *covered in groups:
            words += 1
            tokens += len(ids)
            n_unk = ids.count(unk_id) if unk_id is not None else 0
            unk_tokens += n_unk
            unk_words += n_unk > 0
            whole += len(ids) == 1 and n_unk == 0 and (covered[0] if covered else True)
            if n_unk and len(unk_examples) < MAX_UNK_EXAMPLES and word not in unk_examples:
                unk_examples.append(word)
    return {
        "sentences": n_sentences, "words": words, "tokens": tokens,
        "unk_tokens": unk_tokens, "unk_token_share": unk_tokens / tokens if tokens else 0.0,
        "unk_words": unk_words, "unk_word_share": unk_words / words if words else 0.0,
        "subwords_per_word": tokens / words if words else 0.0,
        "whole_word_share": whole / words if words else 0.0,
        "vocab_size": spec.size, "unk_examples": unk_examples,
    }


def describe(spec) -> dict:
    return {"folder": str(spec.folder), "kind": spec.kind, "vocab_size": spec.size,
            "fingerprint": spec.fingerprint, "lower_case": bool(spec.lower_case)}


def compare_tokenizers(old, new, sentences: Sequence[str], source: str = "",
                       segmenter: str | None = None) -> dict:
    """Both tokenizers measured on the same held-out words (see the module doc)."""
    from .report import word_pieces

    out = {"eval_source": source, "sentences": len(sentences),
           **({"words_from": segmenter} if segmenter else {})}
    for name, spec in (("old", old), ("new", new)):
        groups = (g for _, g in word_pieces(spec, sentences, segmenter))
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
    return re.sub(r"[^A-Za-z0-9.-]+", "-", Path(spec.folder).resolve().name).strip("-.")[:60] or spec.kind


def _short(folder: str, width: int = 40) -> str:
    return folder if len(folder) <= width else "…" + folder[-(width - 1):]
