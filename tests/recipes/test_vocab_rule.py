"""recipes/vocab_rule.py: the words it counts are the vocab stage's (MeCab's for Japanese, not
runs between spaces), and it never suggests fewer pieces than the corpus's characters need
(issue 46: 2,000 pieces for a Japanese dump whose sentencepiece needed 3,266 characters)."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from recipes.vocab_rule import body_parameters, corpus_words, suggest_vocab_size
from vocab.kinds.mecab import MecabWords

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "unspaced"
SMALL = json.loads((ROOT / "trainer" / "configs" / "modernbert_small.json").read_text())


def test_japanese_words_are_mecabs_as_the_vocab_stage_counts_them(tmp_path):
    pytest.importorskip("fugashi")
    shutil.copy(FIXTURES / "ja.txt", tmp_path / "ja.txt")
    corpus = corpus_words(tmp_path, "ja")
    lines = [s for s in (FIXTURES / "ja.txt").read_text(encoding="utf-8").splitlines() if s.strip()]
    assert corpus.words == MecabWords().count(lines)
    assert "東京" in corpus.words and max(map(len, corpus.words)) < 10   # words, not sentences


def test_a_script_of_thousands_of_characters_gets_a_vocab_that_trains(tmp_path):
    """3,000 Chinese characters: the corpus and model bounds say 4,000 pieces, but a WordPiece
    vocab keeps each character as c and ##c (6,104 entries): the rule says 7,000, and the vocab
    stage trains at that size."""
    rng = random.Random(0)
    chars = [chr(0x4E00 + i) for i in range(3000)]
    lines = []
    for _ in range(6):   # every character six times, 30 a sentence
        order = rng.sample(chars, len(chars))
        lines += ["".join(order[i:i + 30]) + "。" for i in range(0, len(order), 30)]
    text = "\n".join(lines) + "\n"
    (tmp_path / "filtered").mkdir()
    (tmp_path / "filtered" / "zh.txt").write_text(text, encoding="utf-8")
    corpus = corpus_words(tmp_path / "filtered", "zh")
    assert len(corpus.alphabet) == 3001 and corpus.least >= 104 + 2 * 3001
    size, why = suggest_vocab_size(corpus.words, SMALL["hidden_size"], body_parameters(SMALL), corpus.least)
    assert size == 7000 and "its characters need at least 6,106 pieces" in why
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "--lang", "zh", "--workers", "1",
                                   "vocab", "--input", str(tmp_path / "filtered"), "--vocab-size", str(size)])
    assert res.exit_code == 0, res.output
