"""A shard spilled to disk (pipeline/encoding/spill.py) is the in-memory Corpus's documents:
the same ids, document bounds and word starts, however the text is cut into blocks; its
temporary files are gone afterwards, also when the work fails."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.encoding.instances import Corpus
from pipeline.encoding.spill import spilled_corpus
from tests.helpers.encode_testdata import documents_text, make_documents, vocab_tokens, write_vocab
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.kinds import load_vocab


class WordIdEncoder:
    """ids from the words' numbers, a word start every third token (a tokenizer's word ids)."""

    def encode_words(self, text):
        lines = text.split("\n")
        counts = np.array([len(line.split()) for line in lines], dtype=np.int64)
        ids = np.array([5 + len(w) for line in lines for w in line.split()], dtype=np.int32)
        starts = np.array([i % 3 == 0 for line in lines for i, _ in enumerate(line.split())], dtype=bool)
        return ids, counts, starts


@pytest.fixture(scope="module")
def text():
    docs = make_documents(40, seed=8)
    # blank lines in a row, a line of spaces, a document of nothing: all as the Corpus reads them
    return "\n\n\n   \n" + documents_text(docs[:20]) + "\n\n  \n\n" + documents_text(docs[20:])


@pytest.mark.parametrize("block_chars", [64, 1000, 1 << 16])
@pytest.mark.parametrize("with_starts", [False, True])
def test_the_spilled_corpus_is_the_corpus(tmp_path, text, block_chars, with_starts):
    if with_starts:
        encoder = WordIdEncoder()
    else:
        encoder = FastWordPiece(load_vocab(write_vocab(tmp_path / "v", vocab_tokens(text), lower_case=False)))
    shard = tmp_path / "xxwiki_training_0.txt"
    shard.write_text(text, encoding="utf-8")
    work = tmp_path / "work"
    want = Corpus.from_text(text, encoder)
    with spilled_corpus(shard, encoder, work, block_chars=block_chars) as got:
        assert isinstance(got.tokens, np.memmap) and got.tokens.dtype == np.int32
        assert (np.asarray(got.tokens) == want.tokens).all()
        assert (got.doc_token_bounds == want.doc_token_bounds).all()
        assert got.n_docs == want.n_docs and got.n_sentences == want.n_sentences
        if with_starts:
            assert (np.asarray(got.word_starts) == want.word_starts).all()
        else:
            assert got.word_starts is None
        assert len(list(work.iterdir())) == 1 + with_starts
    assert not list(work.iterdir())


def test_the_files_go_when_the_work_fails(tmp_path, text):
    shard = tmp_path / "s.txt"
    shard.write_text(text, encoding="utf-8")
    with pytest.raises(RuntimeError), spilled_corpus(shard, WordIdEncoder(), tmp_path / "w"):
        raise RuntimeError("killed")
    assert not list((tmp_path / "w").iterdir())


def test_an_empty_shard_has_no_documents(tmp_path):
    shard = tmp_path / "s.txt"
    shard.write_text("\n  \n\n", encoding="utf-8")
    with spilled_corpus(shard, WordIdEncoder(), tmp_path / "w") as c:
        assert c.n_docs == 0 and len(c.tokens) == 0
