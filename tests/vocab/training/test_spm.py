"""sentencepiece's required characters, counted as it counts them: a vocab one piece smaller
than they need fails to train, one that holds them trains (issue 46: a Japanese dump was given
2,000 pieces for 3,266 required characters)."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from vocab.core.layout import TrainingError
from vocab.training.spm import required_chars, train_sentencepiece


def test_required_chars_is_the_bound_sentencepiece_enforces(tmp_path):
    rng = random.Random(0)
    chars = [chr(0x4E00 + i) for i in range(1200)]
    weights = [1 / (i + 1) for i in range(len(chars))]
    words = Counter("".join(rng.choices(chars, weights, k=rng.randint(1, 4))) for _ in range(8000))
    tsv = tmp_path / "words.tsv"
    tsv.write_text("".join(f"{w}\t{n}\n" for w, n in words.items()), encoding="utf-8")
    counts: Counter = Counter()
    for w, n in words.items():
        for c in w:
            counts[c] += n
    need = required_chars(counts)
    assert need < len(counts)                               # the rarest fall outside the coverage
    assert required_chars(counts, 1.0) == len(counts)
    train_sentencepiece(tsv, tmp_path / "ok", need + 1)   # the unknown piece beside them
    with pytest.raises(TrainingError, match="required_chars"):
        train_sentencepiece(tsv, tmp_path / "small", need - 1)
