"""Quality report of a vocab on held-out sentences, with the tokenizer encode uses.

Figures: the [UNK] share of tokens and of words, subwords per word, the share of words kept
whole (one token, not [UNK]), the vocabulary size, and a few words that became [UNK]. "Words"
are BERT's basic-tokenizer words (punctuation marks count as words, as they do for BERT); for
a MeCab vocab MeCab's words, and with a segmenter (jieba, pythainlp) its words joined with
BERT's (vocab/word_starts.py), so a Chinese word of three characters is one word, not three.

Usage:
    rep = evaluate_vocab("data/hu/vocab", sentences, source="held-out 2% of the input")
    print(format_table(rep))
"""
from __future__ import annotations

import os
from collections.abc import Sequence

from .spec import load_vocab
from .tokenizer import make_tokenizer

MAX_UNK_EXAMPLES = 20
# Fewer held-out sentences than this and the figures are noise: the summary says so.
MIN_EVAL_SENTENCES = 1000


def too_small_message(n_sentences: int) -> str | None:
    """One line when `n_sentences` held-out sentences are too few to judge a vocab, else None."""
    if n_sentences >= MIN_EVAL_SENTENCES:
        return None
    return (f"the vocab report is measured on only {n_sentences:,} held-out sentences (under "
            f"{MIN_EVAL_SENTENCES:,}), too few to mean much: hold out more text with "
            "`pipeline shard --min-test-sentences N`, or give held-out text with `pipeline vocab --eval PATH`")


def word_pieces(spec, sentences, segmenter=None, batch_size=1000):
    """(text, [(word text, ids), ...]) per sentence: BERT's words; MeCab's for a MeCab vocab;
    with a segmenter, its words joined with BERT's (vocab/word_starts.py)."""
    if spec.word_tokenizer == "mecab":
        from .japanese import MecabWordPiece

        wp = MecabWordPiece(spec)
        for text in sentences:
            yield text, wp.words_ids(text)
        return
    from .word_starts import token_starts

    tok = make_tokenizer(spec)
    seg = None
    if segmenter is not None:
        from .segmenters import load_segmenter

        seg = load_segmenter(segmenter)
    for start in range(0, len(sentences), batch_size):
        batch = list(sentences[start:start + batch_size])
        for text, enc in zip(batch, tok.encode_batch(batch, add_special_tokens=False)):
            if seg is None:
                starts = [w != p for w, p in zip(enc.word_ids, [None, *enc.word_ids])]
            else:
                starts = token_starts(enc.offsets, seg.spans(text))
            words: list = []   # [first char, last char, ids]
            for tid, s, (a, b) in zip(enc.ids, starts, enc.offsets):
                if s or not words:
                    words.append([a, b, [tid]])
                else:
                    words[-1][1] = b
                    words[-1][2].append(tid)
            yield text, [(text[a:b], ids) for a, b, ids in words]


def evaluate_vocab(vocab_dir: str | os.PathLike, sentences: Sequence[str], source: str = "",
                   batch_size: int = 1000, segmenter: str | None = None) -> dict:
    """Tokenize `sentences` with the vocab's tokenizer and measure it; words are the
    segmenter's when one is given (see word_pieces)."""
    spec = load_vocab(vocab_dir)
    unk_id = spec.unk_id
    words = tokens = unk_tokens = unk_words = whole = 0
    unk_examples: list[str] = []
    for _text, groups in word_pieces(spec, sentences, segmenter, batch_size):
        for word, ids in groups:
            words += 1
            tokens += len(ids)
            n_unk = ids.count(unk_id)
            unk_tokens += n_unk
            unk_words += n_unk > 0
            whole += len(ids) == 1 and n_unk == 0
            if n_unk and len(unk_examples) < MAX_UNK_EXAMPLES and word not in unk_examples:
                unk_examples.append(word)
    return {
        "eval_source": source,
        "sentences": len(sentences),
        "words": words,
        "tokens": tokens,
        "unk_tokens": unk_tokens,
        "unk_token_share": unk_tokens / tokens if tokens else 0.0,
        "unk_words": unk_words,
        "unk_word_share": unk_words / words if words else 0.0,
        "subwords_per_word": tokens / words if words else 0.0,
        "whole_word_share": whole / words if words else 0.0,
        "vocab_size": spec.size,
        "lower_case": spec.lower_case,
        "strip_accents": spec.strip_accents,
        "unk_examples": unk_examples,
        **({"words_from": "mecab" if spec.word_tokenizer else segmenter}
           if spec.word_tokenizer or segmenter else {}),
    }


def format_table(rep: dict) -> str:
    """The report as a small two-column table for the screen."""
    rows = [
        ("held-out text", f"{rep.get('eval_source') or '-'}"),
        ("sentences / words", f"{rep['sentences']:,} / {rep['words']:,}"),
        ("vocab size", f"{rep['vocab_size']:,}"),
        ("[UNK] share of tokens", f"{100 * rep['unk_token_share']:.4f}%  ({rep['unk_tokens']:,})"),
        ("[UNK] share of words", f"{100 * rep['unk_word_share']:.4f}%  ({rep['unk_words']:,})"),
        ("subwords per word", f"{rep['subwords_per_word']:.3f}"),
        ("words kept whole", f"{100 * rep['whole_word_share']:.2f}%"),
    ]
    if rep.get("unk_examples"):
        rows.append(("[UNK] words (sample)", " ".join(rep["unk_examples"][:8])))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)
