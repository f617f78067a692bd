"""Any tokenizer's pieces laid over BERT's words (or a segmenter's), by their character offsets.

A transformers tokenizer splits text its own way (a byte-level BPE keeps ")," together,
XLM-R's Metaspace keeps "word," together), so to count its pieces per word they are laid over
the words BERT's normaliser and basic pre-tokenizer make (whitespace, each punctuation mark,
each CJK character), or a segmenter's words: a token belongs to the word its first non-space
character is in (a lone "▁" or "Ġ" before a word to that word). The vocab report and
`vocab --compare` thus measure every tokenizer on the same words.

Usage:
    for text, groups in aligned_word_pieces(spec, sentences):   # [(word, [ids], covers), ...]
    word_spans(["Első mondat."])                                # [[(0, 4), (5, 11), (11, 12)]]
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from tokenizers import Tokenizer, models, pre_tokenizers

from vocab.core.normalizer import make_normalizer
from vocab.core.segmenters import load_segmenter


def _bert_word_splitter():
    """A tokenizer whose tokens are BERT's words (cased, accents kept), with offsets into the
    original text."""
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
    seg = load_segmenter(segmenter) if segmenter is not None else None
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
