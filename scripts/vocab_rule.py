"""The vocab size to suggest for a corpus and a model, and the warning when the embeddings would
be most of a small model.

Usage:
    words = word_counts(Path("data/xx/filtered"))           # Counter of the corpus's words
    size, why = suggest_vocab_size(words, hidden=256, body_params=3_150_000)
    warning = embedding_warning(32000, hidden=128, body_params=530_000)   # None when fine

The rule (stated in docs/training.md and in the line scripts/pretrain.py prints):
  - corpus: a piece needs examples to learn its embedding, so no more pieces than the corpus
    has words seen at least MIN_COUNT times (plus the characters and special tokens, about
    1,000), rounded down to a thousand;
  - model: the embeddings (vocab x hidden) at most half of all the parameters, so the size is
    at most the parameters of the layers above them divided by the hidden size;
  - the smaller of the two, at least 1,000 (the characters alone need a few hundred).
32,000 pieces on a corpus of 52,000 distinct words made 4.1M of a tiny model's 4.6M parameters
embeddings (issue 38); that corpus had about 9,000 words seen 5 times or more.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

MIN_COUNT = 5
RESERVED = 1000          # specials, [unused], every character as c and ##c
MIN_SIZE = 1000
MAX_EMBEDDING_SHARE = 0.5
READ_BYTES = 200_000_000  # enough text to count the frequent words of any corpus
WORD = re.compile(r"\w+")


def word_counts(folder: Path, max_bytes: int = READ_BYTES) -> Counter:
    """Words (runs of letters and digits) of the .txt files under `folder`, the first max_bytes.
    Scripts written without spaces count runs, not words: their suggestion leans on the model."""
    counts: Counter = Counter()
    read = 0
    for path in sorted(Path(folder).rglob("*.txt")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                counts.update(WORD.findall(line))
                read += len(line)
                if read >= max_bytes:
                    return counts
    return counts


def body_parameters(config: dict) -> int:
    """Parameters of a ModernBERT's layers above the embeddings (attention, GeGLU, norms)."""
    h, layers, inter = config["hidden_size"], config["num_hidden_layers"], config["intermediate_size"]
    per_layer = 4 * h * h + 3 * h * inter + 2 * h    # qkv + out, Wi (2 x inter) + Wo, two norms
    return layers * per_layer + h


def suggest_vocab_size(words: Counter, hidden: int, body_params: int) -> tuple[int, str]:
    """(size, the reason in words)."""
    frequent = sum(1 for n in words.values() if n >= MIN_COUNT)
    by_corpus = (frequent + RESERVED) // 1000 * 1000
    by_model = int(body_params / hidden * MAX_EMBEDDING_SHARE / (1 - MAX_EMBEDDING_SHARE)) // 1000 * 1000
    size = max(MIN_SIZE, min(by_corpus, by_model))
    why = (f"{len(words):,} distinct words, {frequent:,} seen {MIN_COUNT}+ times -> at most "
           f"{by_corpus:,} pieces; the model's {body_params / 1e6:.1f}M parameters above the "
           f"embeddings at hidden {hidden} -> at most {by_model:,} for embeddings under half of it")
    return size, why


def embedding_warning(vocab_size: int, hidden: int, body_params: int) -> str | None:
    """A line when vocab x hidden would be more than half of the model's parameters."""
    emb = vocab_size * hidden
    share = emb / (emb + body_params)
    if share <= MAX_EMBEDDING_SHARE:
        return None
    return (f"warning: {vocab_size:,} pieces x hidden {hidden} = {emb / 1e6:.1f}M of the model's "
            f"{(emb + body_params) / 1e6:.1f}M parameters are embeddings ({100 * share:.0f}%): most "
            "pieces will be seen too rarely to learn; a smaller --vocab-size leaves more to the layers")
