"""The vocab size to suggest for a corpus and a model, and the warning when the embeddings would
be most of a small model.

Usage:
    corpus = corpus_words(Path("data/ja/filtered"), "ja")   # its words as the vocab stage counts them
    size, why = suggest_vocab_size(corpus.words, hidden=256, body_params=3_150_000, least=corpus.least)
    warning = embedding_warning(32000, hidden=128, body_params=530_000)   # None when fine

The rule (stated in docs/training.md and in the line recipes/pretrain.py prints):
  - corpus: a piece needs examples to learn its embedding, so no more pieces than the corpus
    has words seen at least MIN_COUNT times (plus the characters and special tokens, about
    1,000), rounded down to a thousand; the words are those the vocab stage trains on (the
    tokenizer kind's sample words: BERT's split, MeCab's words for Japanese, cut at PyThaiNLP's
    words for Thai, one word a character for Chinese), never a split on spaces that leaves a
    whole Japanese sentence one word;
  - model: the embeddings (vocab x hidden) at most half of all the parameters, so the size is
    at most the parameters of the layers above them divided by the hidden size;
  - the smaller of the two, at least 1,000 (the characters alone need a few hundred), and never
    less than the kind can be trained with on the corpus's characters (`least`, rounded up to a
    thousand: a WordPiece vocab keeps every character as c and ##c, sentencepiece its required
    characters at --character-coverage; a script of thousands of characters needs thousands).
32,000 pieces on a corpus of 52,000 distinct words made 4.1M of a tiny model's 4.6M parameters
embeddings (issue 38); that corpus had about 9,000 words seen 5 times or more. A Japanese dump
of 3,266 required characters was offered 2,000 pieces and failed to train (issue 46).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipeline.text.language_settings import word_segmenter
from vocab.core.normalizer import alphabet_of
from vocab.kinds import training_kind

MIN_COUNT = 5
RESERVED = 1000          # specials, [unused], every character as c and ##c
MIN_SIZE = 1000
MAX_EMBEDDING_SHARE = 0.5
READ_BYTES = 200_000_000  # enough text to count the frequent words of any corpus
MODEL_TYPE = "bpe"        # `pipeline vocab --model-type`'s default
CHARACTER_COVERAGE = 0.9999   # `pipeline vocab --character-coverage`'s default


@dataclass
class CorpusWords:
    """What the rule reads of a corpus: its words, its characters and the smallest vocab."""

    words: Counter       # the kind's sample words (vocab/training/words.py), counted
    alphabet: set        # every character of the read text, as the words normalise it
    least: int           # the smallest --vocab-size the kind trains on these characters


def _lines(folder: Path, max_bytes: int):
    read = 0
    for path in sorted(Path(folder).rglob("*.txt")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                yield line
                read += len(line)
                if read >= max_bytes:
                    return


def corpus_words(folder: Path, lang: str, model_type: str = MODEL_TYPE, max_bytes: int = READ_BYTES,
                 character_coverage: float = CHARACTER_COVERAGE) -> CorpusWords:
    """The words of the .txt files under `folder` (the first max_bytes) as `pipeline --lang LANG
    vocab --model-type MODEL_TYPE` counts them: the language's segmenter (its settings) and the
    kind that model type trains for it (vocab/kinds), so no kind is named here."""
    return words_of(_lines(folder, max_bytes), lang, model_type, character_coverage)


def words_of(lines, lang: str, model_type: str = MODEL_TYPE,
             character_coverage: float = CHARACTER_COVERAGE) -> CorpusWords:
    """corpus_words of any lines of text (recipes/corpus_estimate.py: a dump's cleaned articles)."""
    segmenter = word_segmenter(lang)
    kind = training_kind(model_type, segmenter)
    sample = kind.sample_words(False, False, segmenter)
    raw: set[str] = set()   # the characters read, gathered in the words' one pass over the text

    def sentences():
        for line in lines:
            raw.update(line)
            if line.strip():
                yield line

    words = sample.count(sentences())
    alphabet = alphabet_of(raw, sample.char_normalizer())
    chars: Counter = Counter()
    for word, n in words.items():
        for c in word:
            chars[c] += n
    return CorpusWords(words, alphabet, kind.least_vocab_size(alphabet, chars, character_coverage))


def body_parameters(config: dict) -> int:
    """Parameters of a ModernBERT's layers above the embeddings (attention, GeGLU, norms)."""
    h, layers, inter = config["hidden_size"], config["num_hidden_layers"], config["intermediate_size"]
    per_layer = 4 * h * h + 3 * h * inter + 2 * h    # qkv + out, Wi (2 x inter) + Wo, two norms
    return layers * per_layer + h


def suggest_vocab_size(words: Counter, hidden: int, body_params: int, least: int = 0) -> tuple[int, str]:
    """(size, the reason in words); `least`: the smallest vocab the corpus's characters allow
    (CorpusWords.least)."""
    frequent = sum(1 for n in words.values() if n >= MIN_COUNT)
    by_corpus = (frequent + RESERVED) // 1000 * 1000
    by_model = int(body_params / hidden * MAX_EMBEDDING_SHARE / (1 - MAX_EMBEDDING_SHARE)) // 1000 * 1000
    size = max(MIN_SIZE, min(by_corpus, by_model))
    why = (f"{len(words):,} distinct words, {frequent:,} seen "
           f"{MIN_COUNT}+ times -> at most {by_corpus:,} pieces; the model's {body_params / 1e6:.1f}M "
           f"parameters above the embeddings at hidden {hidden} -> at most {by_model:,} for "
           "embeddings under half of it")
    if size < least:
        size = -(-least // 1000) * 1000
        why += f"; but its characters need at least {least:,} pieces"
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
