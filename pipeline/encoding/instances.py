"""BERT's create_pretraining_data instance layout, on token offsets instead of token lists.

Usage:
    corpus = Corpus.from_text(text, FastWordPiece(spec))
    plan = plan_instances(corpus, max_seq=128, dupe_factor=5, short_seq_prob=0.1, seed=42)
    plan.a_start, plan.a_len, plan.b_start, plan.b_len, plan.random_next   # one row per instance

A shard is one flat int32 array of word-piece ids plus sentence and document boundaries, so an
A or B segment (consecutive sentences, then truncated at either end) is just a range of that
array. The walk over documents follows google-research/bert's create_instances_from_document
(documents shuffled once, `dupe_factor` passes, chunks of sentences filled up to a target length,
A/B split at a random sentence, 50% random next from another document with the unused
sentences put back, one-sentence chunks always take a random B, the longer side truncated one
token at a time from a random end) and records only numbers; the tokens are gathered later, a
batch at a time (pipeline/encoding/masking.py), so memory stays bounded by the shard.

Two deliberate differences: the short target length is drawn per chunk (the reference draws it
once per document, so `short_seq_prob` was not the share of short instances), and the
truncation's coin flips are drawn as one binomial count per side, which gives the same
distribution as the reference's token-by-token loop.
"""
from __future__ import annotations

import io
import random
from bisect import bisect_left
from dataclasses import dataclass

import numpy as np

# Characters of text tokenised at a time: the per-character work arrays stay a few MB.
BLOCK_CHARS = 1 << 16


@dataclass
class Corpus:
    """The documents of one shard as word-piece ids."""

    tokens: np.ndarray        # int32, every sentence's ids back to back
    sent_bounds: np.ndarray   # int64 [S+1]: sentence i is tokens[sent_bounds[i]:sent_bounds[i+1]]
    doc_bounds: np.ndarray    # int64 [D+1]: document d is sentences doc_bounds[d]:doc_bounds[d+1]
    # bool per token: it starts a word (segmenter words, vocab/core/word_starts.py); None when the
    # tokenizer gives none (then a word is a piece and its ## pieces)
    word_starts: np.ndarray | None = None

    @property
    def n_docs(self) -> int:
        return len(self.doc_bounds) - 1

    @property
    def n_sentences(self) -> int:
        return len(self.sent_bounds) - 1

    @classmethod
    def from_file(cls, path, wordpiece, block_chars: int = BLOCK_CHARS) -> Corpus:
        """Read a shard: one sentence per line, documents separated by blank lines.

        As in the reference, a line that is empty after stripping starts a new document, a line
        without any word piece is dropped, and so are documents without sentences. The text is
        read and tokenised a block of lines at a time, so only the ids stay in memory.
        """
        with open(path, encoding="utf-8") as fh:
            return cls.from_stream(fh, wordpiece, block_chars)

    @classmethod
    def from_text(cls, text: str, wordpiece) -> Corpus:
        return cls.from_stream(io.StringIO(text), wordpiece)

    @classmethod
    def from_stream(cls, fh, wordpiece, block_chars: int = BLOCK_CHARS) -> Corpus:
        ids_parts, len_parts, doc_parts, start_parts = [], [], [], []
        for block in tokenised_blocks(fh, wordpiece, block_chars):
            ids_parts.append(block.ids)
            len_parts.append(block.sent_len)
            doc_parts.append(block.sent_doc)
            if block.word_starts is not None:
                start_parts.append(block.word_starts)
        if not ids_parts:
            ids_parts, len_parts, doc_parts = [np.zeros(0, np.int32)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        tokens = np.concatenate(ids_parts).astype(np.int32, copy=False)
        del ids_parts
        sent_len = np.concatenate(len_parts)
        doc_of_sent = np.concatenate(doc_parts)
        sent_bounds = np.zeros(len(sent_len) + 1, dtype=np.int64)
        np.cumsum(sent_len, out=sent_bounds[1:])
        # documents = runs of equal document numbers among the kept sentences
        starts = np.flatnonzero(np.r_[True, doc_of_sent[1:] != doc_of_sent[:-1]])
        if not len(doc_of_sent):
            starts = starts[:0]
        doc_bounds = np.r_[starts, len(sent_len)].astype(np.int64)
        word_starts = None
        if hasattr(wordpiece, "encode_words"):
            word_starts = (np.concatenate(start_parts) if start_parts else np.zeros(0, bool))
        return cls(tokens=tokens, sent_bounds=sent_bounds, doc_bounds=doc_bounds,
                   word_starts=word_starts)

    @property
    def doc_token_bounds(self) -> np.ndarray:
        """int64 [D+1]: document d is tokens[b[d]:b[d+1]]."""
        return self.sent_bounds[self.doc_bounds]


@dataclass
class TokenBlock:
    """The word pieces of one block of a shard's lines (tokenised_blocks)."""

    ids: np.ndarray                  # int32: the kept sentences' ids back to back
    sent_len: np.ndarray             # int64: the pieces of each kept sentence
    sent_doc: np.ndarray             # int64: each kept sentence's document number (ascending)
    word_starts: np.ndarray | None   # bool per id, from a tokenizer that gives them


def tokenised_blocks(fh, wordpiece, block_chars: int = BLOCK_CHARS):
    """The shard's text a block of lines at a time, as word pieces (see Corpus.from_file for the
    rules): only one block's text is in memory at a time."""
    with_starts = hasattr(wordpiece, "encode_words")
    doc = 0
    while True:
        lines = fh.readlines(block_chars)
        if not lines:
            break
        text = "".join(lines)
        if text.endswith("\n"):
            text = text[:-1]
        starts = None
        if with_starts:
            ids, counts, starts = wordpiece.encode_words(text)
        else:
            ids, counts = wordpiece.encode_text(text)
        del text
        blank = np.fromiter((not line.strip() for line in lines), dtype=bool, count=len(lines))
        del lines
        keep = (counts > 0) & ~blank
        doc_of_line = doc + np.cumsum(blank)   # a blank line opens the next document
        doc = int(doc_of_line[-1])
        yield TokenBlock(ids=ids, sent_len=counts[keep], sent_doc=doc_of_line[keep], word_starts=starts)


@dataclass
class InstancePlan:
    """One row per instance, in the (shuffled) order they are written."""

    a_start: np.ndarray      # int64 offsets into Corpus.tokens
    a_len: np.ndarray        # int64
    b_start: np.ndarray
    b_len: np.ndarray
    random_next: np.ndarray  # bool: B comes from another document
    multi: np.ndarray        # bool: the chunk had two or more sentences (random next was a coin flip)
    short: np.ndarray        # bool: the chunk's target length was a short one

    def __len__(self) -> int:
        return len(self.a_start)

    def take(self, sl) -> InstancePlan:
        return InstancePlan(**{k: v[sl] for k, v in self.__dict__.items()})


def plan_instances(corpus: Corpus, max_seq: int, dupe_factor: int, short_seq_prob: float,
                   seed: int) -> InstancePlan:
    """Lay out every instance of the shard: segment ranges and labels, shuffled. See module doc."""
    rnd = random.Random(seed)
    max_tokens = max_seq - 3      # [CLS] A [SEP] B [SEP]
    n_docs = corpus.n_docs
    sb = corpus.sent_bounds.tolist()
    db = corpus.doc_bounds.tolist()
    order = list(range(n_docs))
    rnd.shuffle(order)

    a_s: list[int] = []
    a_e: list[int] = []
    b_s: list[int] = []
    b_e: list[int] = []
    rand_next: list[bool] = []
    multi: list[bool] = []
    short: list[bool] = []
    random_ = rnd.random   # C speed; randint(a, b) below is a + int(random_() * (b - a + 1))
    for _ in range(dupe_factor):
        for doc_index, doc in enumerate(order):
            s_end = db[doc + 1]
            i = db[doc]
            while i < s_end:
                target = max_tokens
                is_short = random_() < short_seq_prob
                if is_short:
                    target = 2 + int(random_() * (max_tokens - 1))
                # the chunk: sentences i..k-1, the fewest whose length reaches the target
                k = bisect_left(sb, sb[i] + target, i + 1, s_end)
                n = k - i
                a_end = i + (1 + int(random_() * (n - 1)) if n >= 2 else 1)
                a_s.append(sb[i])
                a_e.append(sb[a_end])
                if n == 1 or random_() < 0.5:
                    target_b = target - (sb[a_end] - sb[i])
                    for _try in range(10):
                        r = int(random_() * n_docs)
                        if r != doc_index:
                            break
                    rdoc = order[r]
                    r_end = db[rdoc + 1]
                    start = db[rdoc] + int(random_() * (r_end - db[rdoc]))
                    # sentences from `start` until B reaches its target (at least one)
                    stop = bisect_left(sb, sb[start] + target_b, start + 1, r_end)
                    b_s.append(sb[start])
                    b_e.append(sb[stop])
                    rand_next.append(True)
                    i = a_end      # the chunk's unused sentences are put back
                else:
                    b_s.append(sb[a_end])
                    b_e.append(sb[k])
                    rand_next.append(False)
                    i = k
                multi.append(n >= 2)
                short.append(is_short)

    a_start = np.array(a_s, dtype=np.int64)
    a_len = np.array(a_e, dtype=np.int64) - a_start
    b_start = np.array(b_s, dtype=np.int64)
    b_len = np.array(b_e, dtype=np.int64) - b_start
    del a_s, a_e, b_s, b_e

    nprng = np.random.default_rng([seed & 0xFFFFFFFF, seed >> 32, 1])
    a_start, a_len, b_start, b_len = _truncate_pairs(a_start, a_len, b_start, b_len, max_tokens, nprng)
    perm = nprng.permutation(len(a_start))
    return InstancePlan(
        a_start=a_start[perm], a_len=a_len[perm], b_start=b_start[perm], b_len=b_len[perm],
        random_next=np.array(rand_next, dtype=bool)[perm], multi=np.array(multi, dtype=bool)[perm],
        short=np.array(short, dtype=bool)[perm])


def _truncate_pairs(a_start, a_len, b_start, b_len, max_tokens, rng):
    """The reference's truncate_seq_pair for all pairs at once.

    It removes one token at a time from the longer side (from B when equal), at a random end.
    So the longer side loses the length difference first, then B and A alternate, B first;
    the number of those removals taken from the front is Binomial(removals, 1/2).
    """
    excess = np.maximum(a_len + b_len - max_tokens, 0)
    diff = a_len - b_len
    first = np.minimum(np.abs(diff), excess)
    rest = excess - first
    cut_a = np.where(diff > 0, first, 0) + rest // 2
    cut_b = np.where(diff > 0, 0, first) + (rest + 1) // 2
    front_a = rng.binomial(cut_a, 0.5)
    front_b = rng.binomial(cut_b, 0.5)
    return a_start + front_a, a_len - cut_a, b_start + front_b, b_len - cut_b
