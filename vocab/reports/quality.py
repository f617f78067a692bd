"""Quality report of a vocab on held-out sentences, with the tokenizer encode uses.

Figures: the [UNK] share of tokens and of words, subwords per word, the share of words kept
whole (one token, not [UNK]), the vocabulary size, and a few words that became [UNK]. "Words"
are what the tokenizer's kind calls words (its `word_pieces`): BERT's basic-tokenizer words
(punctuation marks count as words, as they do for BERT); for a MeCab vocab MeCab's words, and
with a segmenter (jieba, pythainlp) its words joined with BERT's (vocab/core/word_starts.py), so
a Chinese word of three characters is one word, not three. A transformers tokenizer (`pipeline
vocab --model-type bytelevel-bpe`, or any tokenizer folder) is measured on the same words, its
pieces laid over them by their offsets (vocab/core/word_align.py); it may have no unknown token
at all.

Usage:
    rep = evaluate_vocab("data/hu/vocab", sentences, source="held-out 2% of the input")
    print(format_table(rep))
"""
from __future__ import annotations

import os
from collections.abc import Sequence

from vocab.kinds import load_tokenizer

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


def evaluate_vocab(vocab_dir: str | os.PathLike, sentences: Sequence[str], source: str = "",
                   batch_size: int = 1000, segmenter: str | None = None) -> dict:
    """Tokenize `sentences` with the vocab's tokenizer and measure it; words are the
    segmenter's when one is given (the kind's word_pieces)."""
    spec = load_tokenizer(vocab_dir)
    groups = (g for _text, g in spec.word_pieces(sentences, segmenter, batch_size))
    return {
        "eval_source": source,
        **measure(spec, groups, len(sentences)),
        "lower_case": spec.lower_case,
        "strip_accents": spec.strip_accents,
        **spec.report_record(segmenter),
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
