"""What a tokenizer kind is: the one interface that the pipeline's stages, the reports and the
trainer ask, so that none of them asks which kind it holds (vocab/kinds/__init__.py is the
registry; each kind is one module of vocab/kinds/ with one class).

A kind is a class. Before anything is loaded it says whether a folder is one of its own
(`claims`, on a `Found` that reads each file once for every kind that asks) and loads it
(`load`); whether it is what `pipeline vocab --model-type X` trains for a language (`trains`),
what it asks of the settings (`check_training`), which words its training sample is cut into
(`sample_words`), the smallest vocab its training takes on a corpus (`least_vocab_size`) and how
it is trained and written (`train`, one resumable step after another).
Loaded, an instance is the tokenizer (a "spec"):

    spec.size, spec.tokens, spec.pad_id / unk_id / cls_id / sep_id / mask_id, spec.role_ids()
    spec.is_special(token), spec.continues_word(token), spec.pair_type_id
    spec.lower_case, spec.strip_accents, spec.folder, spec.files, spec.location
    spec.fingerprint                       # what decides the ids (vocab/core/fingerprint.py)
    spec.check_usable()                    # masked-LM data needs pad, cls, sep and mask tokens
    spec.word_segmenter(default)           # the segmenter whose words it masks (MeCab: its own)
    spec.encoder(segmenter)                # text -> (ids, ids per line, word starts), per process
    spec.word_pieces(sentences, segmenter) # each sentence's words and their pieces (reports)
    spec.word_ids(words)                   # each word's ids, as a text of its own
    spec.piece_key(token)                  # (the piece's text as bytes, starts a word?): adaptation
    spec.save(folder, model_max_length=None, tokenizer_json=False)   # its files, atomically
    spec.fast_text(text)                   # text as its tokenizer.json takes it (MeCab: words split)
    spec.records_in_data, spec.folder_suffix(), spec.piece_model     # what the data records

`TrainingJob` is what a stage hands `train`: the sample (work/sample.tsv, sample.txt,
alphabet.json), the folder to write, the settings, and `steps`, which runs a named step once
(the stage's task markers: a rerun skips what is done).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from vocab.core.layout import (
    ROLES,
    TOKENIZER_CONFIG,
    TOKENIZER_JSON,
    VOCAB_TXT,
    VocabError,
    read_json,
)
from vocab.core.tokenizer_json import SLOW_TOKENIZER_FILES, convert_slow

_ENCODERS: dict = {}   # one shard encoder per process: the last one asked for


class Found:
    """A path a tokenizer may be loaded from (a folder or a file), each file read at most once
    for all the kinds that look at it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def folder(self) -> Path:
        return self.path.parent if self.path.is_file() else self.path

    @property
    def vocab_txt(self) -> Path | None:
        """The vocab.txt it names: the file itself (unless a tokenizer.json), or its folder's."""
        if self.path.is_file():
            return None if self.path.name == TOKENIZER_JSON else self.path
        found = self.path / VOCAB_TXT
        return found if found.is_file() else None

    @property
    def tokenizer_file(self) -> Path | None:
        if self.path.is_file():
            return self.path if self.path.name == TOKENIZER_JSON else None
        found = self.path / TOKENIZER_JSON
        return found if found.is_file() else None

    @cached_property
    def slow_files(self) -> list[str]:
        """A slow tokenizer's files in a folder with neither tokenizer.json nor vocab.txt."""
        if self.path.is_file() or self.tokenizer_file or self.vocab_txt:
            return []
        return [n for n in SLOW_TOKENIZER_FILES if (self.path / n).is_file()]

    @cached_property
    def config(self) -> dict:
        """tokenizer_config.json ({} when there is none)."""
        return read_json(self.folder / TOKENIZER_CONFIG) or {}

    @cached_property
    def tokenizer_text(self) -> str | None:
        """tokenizer.json's text, or transformers' conversion of the slow files (None: neither)."""
        if self.tokenizer_file is not None:
            return self.tokenizer_file.read_bytes().decode("utf-8", errors="replace")
        if self.slow_files:
            return convert_slow(self.folder, self.slow_files)
        return None

    @cached_property
    def tokenizer_json(self) -> dict | None:
        """tokenizer.json, parsed (None when the folder has none)."""
        text = self.tokenizer_text
        if text is None:
            return None
        try:
            tj = json.loads(text)
            if not isinstance(tj.get("model"), dict):
                raise KeyError("model")
        except Exception as exc:   # not JSON, or not the JSON of a tokenizer
            raise VocabError(f"{self.tokenizer_file or self.folder} is not a tokenizers tokenizer.json "
                             f"({type(exc).__name__}: {str(exc)[:160]}): give the tokenizer.json that "
                             "transformers' save_pretrained writes") from None
        return tj

    @property
    def model_type(self) -> str | None:
        """tokenizer.json's model type ("WordPiece", "BPE", "Unigram", "WordLevel"), if any."""
        tj = self.tokenizer_json
        return tj["model"].get("type") if tj else None


class Steps:
    """Runs each named step of a training once: `once(name, fn)` gives fn()'s record, or the
    record of an earlier run that finished the step. This one keeps them in memory; a stage
    passes its StageRun, whose task markers last (pipeline/core/runner.py)."""

    def __init__(self):
        self.done: dict[str, dict] = {}

    def once(self, name: str, fn: Callable[[], dict]) -> dict:
        if name not in self.done:
            self.done[name] = fn()
        return self.done[name]


@dataclass
class TrainingJob:
    """What `train` needs: where the sample is and the vocabulary goes, and the settings."""

    work: Path                     # sample.tsv (word counts), sample.txt, alphabet.json
    out: Path                      # the vocabulary's folder
    vocab_size: int
    model_type: str
    lower_case: bool = False
    strip_accents: bool = False
    character_coverage: float = 0.9999
    seed: int = 12345
    from_spm: Path | None = None   # a sentencepiece model to convert instead of training one
    has_text: bool = True          # False: no input text, the alphabet from the model's pieces
    sample: dict = field(default_factory=dict)   # the sample's figures (for the log line)
    steps: Steps | None = None     # or anything with once(name, fn): a StageRun
    log: logging.Logger | None = None   # where a stage's lines go ("vocab: training bpe on ..."), or none
    prefix: str = "vocab: "

    def say(self, message: str, *args, warning: bool = False) -> None:
        if self.log is not None:
            (self.log.warning if warning else self.log.info)(self.prefix + message, *args)

    def step(self, name: str, fn: Callable[[], dict]) -> dict:
        if self.steps is None:
            self.steps = Steps()
        return self.steps.once(name, fn)


class TokenizerKind:
    """The base of every kind (see the module doc); subclasses set the attributes and implement
    the methods. The instance attributes every kind has: tokens, lower_case, strip_accents,
    folder, pair_type_id."""

    kind: str = ""                      # the registry's name
    description: str = ""               # in the docs: what it is, and what trains or makes it
    piece_model: str = ""               # what manifests record as "kind": wordpiece, bpe, unigram, ...
    model_types: tuple[str, ...] = ()   # the `pipeline vocab --model-type` values it trains
    uses_character_coverage: bool = False   # its training takes --character-coverage
    keeps_sample_text: bool = False     # it trains on the sample's sentences, not word counts
    records_in_data: bool = False       # its fingerprint goes into the HDF5 and the folder name

    # -- finding and loading ----------------------------------------------------------------
    @classmethod
    def claims(cls, found: Found) -> bool:
        """Whether `found` is a tokenizer of this kind (never raises for another kind's files)."""
        raise NotImplementedError

    @classmethod
    def load(cls, found: Found) -> TokenizerKind:
        """The tokenizer at `found`; VocabError (one line) when it is unusable."""
        raise NotImplementedError

    # -- training (pipeline vocab, joint-vocab) ---------------------------------------------
    @classmethod
    def trains(cls, model_type: str, segmenter: str | None) -> bool:
        """Whether `--model-type model_type` for a language with `segmenter` makes this kind."""
        return model_type in cls.model_types

    @classmethod
    def check_training(cls, vocab_size: int, from_spm, strip_accents: bool, segmenter: str | None) -> None:
        """TrainingError (one line) when the settings do not suit this kind."""

    @classmethod
    def least_vocab_size(cls, alphabet: set[str], char_counts, character_coverage: float = 0.9999) -> int:
        """The smallest --vocab-size it can be trained with on a corpus of these characters
        (`alphabet`: each character as its sample words normalise it; `char_counts`: a Counter of
        them over the sample's words, for sentencepiece's character coverage)."""
        return 0

    @classmethod
    def sample_words(cls, lower_case: bool, strip_accents: bool, segmenter: str | None):
        """The words its sample is counted in (vocab/training/words.py's interface)."""
        raise NotImplementedError

    @classmethod
    def train(cls, job: TrainingJob) -> dict:
        """Train on job.work's sample and write the tokenizer into job.out (its own files, each
        atomically); the record of the last step, with "vocab_size" and "seconds"."""
        raise NotImplementedError

    # -- the loaded tokenizer -------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.tokens)

    def id_of(self, token: str) -> int:
        return self._index[token]

    @property
    def _index(self) -> dict[str, int]:
        idx = self.__dict__.get("_idx")
        if idx is None:
            idx = {t: i for i, t in enumerate(self.tokens) if t}
            object.__setattr__(self, "_idx", idx)
        return idx

    def role_id(self, role: str) -> int | None:
        """The id of its special token of `role` ("pad", "unk", "cls", "sep", "mask"); a VocabError
        that says what to do where it has none (an unknown token may be None: byte-level BPE)."""
        raise NotImplementedError

    @property
    def pad_id(self) -> int:
        return self.role_id("pad")

    @property
    def unk_id(self) -> int | None:
        return self.role_id("unk")

    @property
    def cls_id(self) -> int:
        return self.role_id("cls")

    @property
    def sep_id(self) -> int:
        return self.role_id("sep")

    @property
    def mask_id(self) -> int:
        return self.role_id("mask")

    def role_ids(self) -> dict[str, int | None]:
        """role -> id, None for a role it lacks."""
        out = {}
        for role in ROLES:
            try:
                out[role] = self.role_id(role)
            except (KeyError, VocabError):
                out[role] = None
        return out

    @property
    def files(self) -> list[Path]:
        """The files that decide its ids (what an input fingerprint covers)."""
        raise NotImplementedError

    @property
    def location(self) -> Path:
        """What a manifest records as the data's "vocab" (the trainer reads it back)."""
        return self.folder

    def check_usable(self) -> None:
        """VocabError (one line) unless it can make masked-LM data."""

    def word_segmenter(self, default: str | None) -> str | None:
        """The segmenter whose words start the tokens' words (`default`: the language's)."""
        return default

    def words_from(self, segmenter: str | None) -> str | None:
        """What the vocab report calls its words: a segmenter's name, or None for BERT's."""
        return segmenter

    def report_record(self, segmenter: str | None) -> dict:
        """What the vocab report records of the tokenizer besides its figures."""
        words = self.words_from(segmenter)
        return {"words_from": words} if words else {}

    def folder_suffix(self) -> str:
        """The HDF5 folder name's suffix for data encoded with it ("" where nothing is added)."""
        return ""

    def characters(self) -> list[str]:
        """The single characters among its pieces (the vocab's alphabet), where pieces are text."""
        return []

    def encoder(self, segmenter: str | None = None):
        """The object `pipeline encode` tokenises shards with (`encode_words(text) -> (ids, ids per
        line, word starts)`), one per process and tokenizer, so caches carry over between shards."""
        key = (type(self).__name__, str(self.folder), self.fingerprint, self.size, self.lower_case,
               self.strip_accents, segmenter)
        enc = _ENCODERS.get(key)
        if enc is None:
            _ENCODERS.clear()
            enc = _ENCODERS[key] = self.make_encoder(segmenter)
        return enc

    def make_encoder(self, segmenter: str | None):
        raise NotImplementedError

    def word_pieces(self, sentences: Sequence[str], segmenter: str | None = None,
                    batch_size: int = 1000) -> Iterator[tuple[str, list]]:
        """(text, [(word text, ids[, one piece covers it]), ...]) per sentence: its words and
        their pieces, as the vocab report counts them."""
        raise NotImplementedError

    def word_ids(self, words: Sequence[str]) -> list[list[int]]:
        """The pieces of each word without special tokens, each word encoded as a text of its own
        (as at the start of a sentence: "▁word", "Ġword" where the tokenizer adds a prefix space)."""
        raise NotImplementedError

    def piece_key(self, token: str) -> tuple[bytes, bool]:
        """(a piece's text as UTF-8 bytes, whether it starts a word): what vocabulary adaptation
        compares across kinds ("##ab" -> (b"ab", False), "▁ab" -> (b"ab", True))."""
        raise NotImplementedError

    def fast_text(self, text: str) -> str:
        """`text` as the tokenizer.json of its export must be given it to give its ids: the text
        itself, except where the fast form cannot split words as the kind does (MeCab words:
        vocab/kinds/mecab.py gives them joined by spaces)."""
        return text

    def save_tokenizer_json(self, folder: str | Path) -> None:
        """A tokenizer.json in `folder` where its files hold none and it has one to write (a model
        type other than BERT's wants one: transformers 5's AutoTokenizer)."""

    def save(self, folder: str | Path, model_max_length: int | None = None,
             tokenizer_json: bool = False) -> None:
        """Its files in `folder`, each written atomically, so that transformers' AutoTokenizer
        gives the same ids there: as they are (model_max_length None: a run's output_dir), or
        for a model of `model_max_length` positions (an export); `tokenizer_json`: a
        tokenizer.json too where it has none (transformers wants one for most model types)."""
        raise NotImplementedError

    # -- pickling: the tokens, settings and fingerprint travel; the rest is rebuilt -------------
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_") or k == "_fingerprint"}

    def __setstate__(self, state):
        self.__dict__.update(state)
