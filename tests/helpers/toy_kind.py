"""A toy tokenizer kind for tests/vocab/kinds/test_new_kind.py: one module, as a new kind is.

A folder holding `chars.txt` (one token a line, the id is the line number: five special tokens,
then single characters): text is cut at whitespace into words and each word into its
characters; a character not in the list is <unk>. It says what every kind says (vocab/kinds/base.py)
and nothing else knows about it.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vocab.core.fingerprint import fingerprint
from vocab.core.layout import VocabError
from vocab.kinds.base import Found, TokenizerKind

CHARS = "chars.txt"
SPECIALS = ("<pad>", "<unk>", "<cls>", "<sep>", "<mask>")


def write_toy_tokenizer(folder: Path, text: str) -> Path:
    """A toy tokenizer folder with every character of `text`."""
    folder.mkdir(parents=True, exist_ok=True)
    chars = sorted({c for c in text if not c.isspace()})
    (folder / CHARS).write_text("\n".join([*SPECIALS, *chars]) + "\n", encoding="utf-8")
    return folder


@dataclass(frozen=True)
class ToyKind(TokenizerKind):
    folder: Path
    tokens: tuple[str, ...]
    lower_case: bool = False
    strip_accents: bool = False
    pair_type_id: int = 0

    kind = "toy"
    description = "characters of chars.txt (a test's kind)"
    piece_model = "characters"
    records_in_data = True

    @classmethod
    def claims(cls, found: Found) -> bool:
        return (found.folder / CHARS).is_file()

    @classmethod
    def load(cls, found: Found) -> ToyKind:
        tokens = tuple((found.folder / CHARS).read_text(encoding="utf-8").splitlines())
        if tokens[:len(SPECIALS)] != SPECIALS:
            raise VocabError(f"{found.folder / CHARS}: the first lines must be {', '.join(SPECIALS)}")
        return cls(folder=found.folder, tokens=tokens)

    def role_id(self, role: str) -> int:
        return ("pad", "unk", "cls", "sep", "mask").index(role)

    def is_special(self, token: str) -> bool:
        return token in SPECIALS

    def continues_word(self, token: str) -> bool:
        return False

    def piece_key(self, token: str) -> tuple[bytes, bool]:
        return token.encode(), True

    @property
    def files(self) -> list[Path]:
        return [self.folder / CHARS]

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.tokens, self.role_ids(), lambda texts: [self._ids(t) for t in texts])

    def folder_suffix(self) -> str:
        return f"_tok-toy-{self.fingerprint[:8]}"

    def _ids(self, text: str) -> list[int]:
        return [self._index.get(c, 1) for c in text if not c.isspace()]

    def _words(self, text: str) -> list[list[int]]:
        return [self._ids(w) for w in text.split()]

    def make_encoder(self, segmenter):
        return ToyEncoder(self)

    def word_pieces(self, sentences, segmenter=None, batch_size=1000):
        for text in sentences:
            yield text, [(w, self._ids(w)) for w in text.split()]

    def word_ids(self, words):
        return [self._ids(w) for w in words]

    def save(self, folder, model_max_length=None, tokenizer_json=False) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        if Path(folder).resolve() != self.folder.resolve():
            shutil.copyfile(self.folder / CHARS, Path(folder) / CHARS)


class ToyEncoder:
    """ids, ids per line and word starts, as encode asks of a kind's encoder."""

    def __init__(self, spec: ToyKind):
        self.spec = spec

    def encode_words(self, text: str):
        ids, counts, starts = [], [], []
        for line in text.split("\n"):
            n = 0
            for word in self.spec._words(line):
                ids += word
                starts += [True] + [False] * (len(word) - 1)
                n += len(word)
            counts.append(n)
        return np.array(ids, np.int32), np.array(counts, np.int64), np.array(starts, bool)

    def encode_text(self, text: str):
        ids, counts, _ = self.encode_words(text)
        return ids, counts
