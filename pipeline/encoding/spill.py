"""A shard's word pieces spilled to disk and memory-mapped, for packed rows (encode --pack):
the memory a shard needs is a block of its text and a few numbers per document, whatever its
size.

Usage:
    with spilled_corpus(shard, encoder, work_dir) as corpus:     # a SpilledCorpus
        corpus.tokens[index]       # int32 memmap: every kept sentence's ids, back to back
        corpus.doc_token_bounds    # int64 [D+1]: document d is tokens[b[d]:b[d+1]]
        corpus.word_starts         # bool memmap (a tokenizer or segmenter that gives them) or None
    # the temporary files are gone

`tokens` and `word_starts` map the file anew at each access: the pages one batch of rows read
leave the process when its gather is done (an index copies), so the resident memory stays a
batch's, not the shard's, however far the encode has read.

The text is read and tokenised a block of lines at a time (instances.tokenised_blocks, the
rules of Corpus.from_file: a blank line starts a document, lines without pieces and documents
without sentences are dropped); each block's ids are appended to a temporary file in
`folder` (the encode run's work folder) and only each document's length stays in memory. The
files are named `.SHARD.*.tmp`, so what a killed run leaves is removed with the run's other
temporaries (common/atomic.py), and they are deleted when the block ends.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .instances import BLOCK_CHARS, tokenised_blocks


@dataclass
class SpilledCorpus:
    """The documents of one shard as word-piece ids on disk (the surface packing reads)."""

    ids_file: Path
    starts_file: Path | None          # the word starts, where the encoder gives them
    doc_token_bounds: np.ndarray      # int64 [D+1]
    n_sentences: int

    @property
    def n_docs(self) -> int:
        return len(self.doc_token_bounds) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.doc_token_bounds[-1])

    @property
    def tokens(self) -> np.ndarray:
        """int32 [T], mapped for this access (see the module doc)."""
        return _mapped(self.ids_file, np.int32, self.n_tokens)

    @property
    def word_starts(self) -> np.ndarray | None:
        """bool [T] or None, mapped for this access."""
        return None if self.starts_file is None else _mapped(self.starts_file, bool, self.n_tokens)


def _temporary(folder: Path, name: str, what: str) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=f".{what}.tmp", dir=folder)
    os.close(fd)
    return Path(tmp)


def _mapped(path: Path, dtype, n: int) -> np.ndarray:
    return np.memmap(path, dtype=dtype, mode="r", shape=(n,)) if n else np.zeros(0, dtype)


@contextlib.contextmanager
def spilled_corpus(path: str | os.PathLike, wordpiece, folder: str | os.PathLike,
                   block_chars: int = BLOCK_CHARS) -> Iterator[SpilledCorpus]:
    """The shard at `path` tokenised into files in `folder`, mapped; see the module doc."""
    path, folder = Path(path), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = [_temporary(folder, path.stem, "ids")]
    with_starts = hasattr(wordpiece, "encode_words")
    if with_starts:
        files.append(_temporary(folder, path.stem, "starts"))
    try:
        docs, lengths = [], []      # per block: its document numbers and their token counts
        n_tokens = n_sentences = 0
        with contextlib.ExitStack() as stack:
            outs = [stack.enter_context(open(f, "wb")) for f in files]
            text = stack.enter_context(open(path, encoding="utf-8"))
            for block in tokenised_blocks(text, wordpiece, block_chars):
                outs[0].write(np.ascontiguousarray(block.ids, dtype=np.int32).tobytes())
                if with_starts:
                    outs[1].write(np.ascontiguousarray(block.word_starts, dtype=bool).tobytes())
                n_tokens += len(block.ids)
                n_sentences += len(block.sent_len)
                if len(block.sent_doc):
                    first = _run_starts(block.sent_doc)
                    docs.append(block.sent_doc[first])
                    lengths.append(np.add.reduceat(block.sent_len, first))
        doc = np.concatenate(docs) if docs else np.zeros(0, np.int64)
        length = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
        first = _run_starts(doc)            # a document whose lines span two blocks: one
        length = np.add.reduceat(length, first) if len(doc) else length
        bounds = np.zeros(len(length) + 1, dtype=np.int64)
        np.cumsum(length, out=bounds[1:])
        assert bounds[-1] == n_tokens, (bounds[-1], n_tokens)
        yield SpilledCorpus(ids_file=files[0], starts_file=files[1] if with_starts else None,
                            doc_token_bounds=bounds, n_sentences=n_sentences)
    finally:
        for f in files:
            with contextlib.suppress(OSError):
                f.unlink(missing_ok=True)


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins (values are ascending)."""
    return np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
