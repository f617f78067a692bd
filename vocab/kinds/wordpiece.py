"""The kind `wordpiece`: a BERT vocab.txt, its case setting, BERT's special tokens (vocab/core/layout.py).

Trained by `pipeline vocab --model-type bpe|unigram`: sentencepiece on the sample's BERT words
(vocab/training/spm.py), converted to vocab.txt with BERT's specials and every character as `c`
and `##c` (vocab/training/convert.py), tokenizer_config.json with the case setting beside it.
Its encoder is the fast WordPiece (vocab/core/fast_wordpiece.py), with a segmenter's word starts
where the language has one (vocab/core/word_starts.py). Its data stays byte for byte what it was
before other kinds existed: no fingerprint attribute, no folder suffix.

Usage:
    spec = load_tokenizer("data/hu/vocab")   # vocab.kinds: VocabSpec for a BERT vocab.txt
    spec.tokens, spec.mask_id, spec.lower_case, spec.fingerprint
    spec.save("hf_model/", model_max_length=512, tokenizer_json=True)
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from common.atomic import atomic_open, atomic_path, write_json_atomic
from vocab.core.bert_tokenizer import make_fast_tokenizer, make_tokenizer
from vocab.core.fast_wordpiece import FastWordPiece
from vocab.core.fingerprint import fingerprint
from vocab.core.layout import (
    DEFAULT_MAX_LENGTH,
    NUM_SPECIALS,
    TOKENIZER_CONFIG,
    TOKENIZER_JSON,
    VOCAB_TXT,
    bert_tokenizer_config,
    is_bert_special,
    read_case_setting,
    read_vocab_txt,
)
from vocab.core.normalizer import is_vocab_char
from vocab.core.segmenters import load_segmenter
from vocab.core.word_starts import SegmentedWordPiece, token_starts
from vocab.kinds.base import Found, TokenizerKind, TrainingJob
from vocab.training.convert import least_size, read_spm_pieces, to_wordpiece
from vocab.training.spm import MODEL_TYPES as SPM_MODEL_TYPES
from vocab.training.spm import required_chars, train_sentencepiece
from vocab.training.words import BertWords

BERT_ROLES = {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}
SPM_MODEL = "spm.model"
SPM_VOCAB = "spm.vocab"
# sentencepiece keeps <unk> and `▁` among its pieces; neither becomes a vocab.txt line.
SPM_EXTRA_PIECES = 2


@dataclass(frozen=True)
class VocabSpec(TokenizerKind):
    """A WordPiece vocab.txt (see the module doc)."""

    vocab_file: Path
    tokens: tuple[str, ...]
    lower_case: bool = False
    strip_accents: bool = False

    kind = "wordpiece"
    description = ("a BERT vocab.txt (WordPiece on BERT's words): `pipeline vocab --model-type "
                   "bpe|unigram`")
    piece_model = "wordpiece"
    model_types = SPM_MODEL_TYPES
    uses_character_coverage = True
    pair_type_id = 1           # B's segment id in a pair, as BERT's post-processor gives it
    split_by_script = True     # sentencepiece's pieces stay within one script

    # -- finding and loading ----------------------------------------------------------------
    @classmethod
    def claims(cls, found: Found) -> bool:
        return found.vocab_txt is not None and found.config.get("tokenizer_class") != "BertJapaneseTokenizer"

    @classmethod
    def load(cls, found: Found) -> VocabSpec:
        vocab_file = found.vocab_txt
        tokens = read_vocab_txt(vocab_file)
        lower_case, strip_accents = read_case_setting(vocab_file.parent)
        return cls(vocab_file=vocab_file, tokens=tokens, lower_case=lower_case, strip_accents=strip_accents)

    # -- the ids ------------------------------------------------------------------------------
    @property
    def _index(self) -> dict[str, int]:
        idx = self.__dict__.get("_idx")
        if idx is None:
            idx = {t: i for i, t in enumerate(self.tokens)}
            object.__setattr__(self, "_idx", idx)
        return idx

    def role_id(self, role: str) -> int:
        return self.id_of(BERT_ROLES[role])

    def is_special(self, token: str) -> bool:
        """[PAD] [UNK] [CLS] [SEP] [MASK] and the [unusedN] slots: never real word pieces."""
        return is_bert_special(token)

    def continues_word(self, token: str) -> bool:
        """A `##` piece: inside a word, not its start."""
        return token.startswith("##") and not self.is_special(token)

    def piece_key(self, token: str) -> tuple[bytes, bool]:
        if token.startswith("##"):
            return token[2:].encode(), False
        return token.encode(), True

    def characters(self) -> list[str]:
        return [t for t in self.tokens if len(t) == 1 and not self.is_special(t)]

    # -- what records it ----------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return self.vocab_file.parent

    @property
    def location(self) -> Path:
        return self.vocab_file

    @property
    def files(self) -> list[Path]:
        return [self.vocab_file] + [p for p in [self.folder / TOKENIZER_CONFIG] if p.is_file()]

    def fingerprint_extra(self) -> dict | None:
        """What the ids depend on that the probe text cannot show (MeCab words)."""
        return None

    @property
    def fingerprint(self) -> str:
        """What decides the ids (vocab/core/fingerprint.py): the same for this vocab written as a
        tokenizer.json, different when an id would change."""
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            tok = make_tokenizer(self)
            roles = {"pad": self.pad_id, "unk": self.unk_id, "cls": self.cls_id, "sep": self.sep_id,
                     "mask": self.mask_id}
            fp = fingerprint(self.tokens, roles,
                             lambda texts: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
                             self.fingerprint_extra())
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    # -- text -> ids ------------------------------------------------------------------------
    def make_encoder(self, segmenter: str | None):
        if segmenter is not None:
            return SegmentedWordPiece(self, load_segmenter(segmenter))
        return FastWordPiece(self)

    def word_pieces(self, sentences, segmenter=None, batch_size=1000):
        """BERT's words (their word ids), or with a segmenter its words joined with BERT's."""
        tok = make_tokenizer(self)
        seg = load_segmenter(segmenter) if segmenter is not None else None
        for start in range(0, len(sentences), batch_size):
            batch = list(sentences[start:start + batch_size])
            for text, enc in zip(batch, tok.encode_batch(batch, add_special_tokens=False)):
                if seg is None:
                    starts = [w != p for w, p in zip(enc.word_ids, [None, *enc.word_ids])]
                else:
                    starts = token_starts(enc.offsets, seg.spans(text))
                words: list = []   # [first char, last char, ids]
                for tid, s, (a, b) in zip(enc.ids, starts, enc.offsets):
                    if s or not words:
                        words.append([a, b, [tid]])
                    else:
                        words[-1][1] = b
                        words[-1][2].append(tid)
                yield text, [(text[a:b], ids) for a, b, ids in words]

    def word_ids(self, words):
        words = list(words)
        if not words:
            return []
        return [e.ids for e in make_tokenizer(self).encode_batch(words, add_special_tokens=False)]

    # -- its files ----------------------------------------------------------------------------
    @classmethod
    def tokenizer_config(cls, lower_case: bool, strip_accents: bool,
                         model_max_length: int = DEFAULT_MAX_LENGTH) -> dict:
        return bert_tokenizer_config(lower_case, strip_accents, model_max_length)


    @classmethod
    def write_vocab(cls, folder: Path, tokens, lower_case: bool, strip_accents: bool) -> None:
        """A new vocab's files: vocab.txt and tokenizer_config.json (keys sorted, as a stage
        writes its JSON)."""
        with atomic_open(folder / VOCAB_TXT) as fh:
            fh.writelines(t + "\n" for t in tokens)
        write_json_atomic(folder / TOKENIZER_CONFIG, cls.tokenizer_config(lower_case, strip_accents))

    def save(self, folder, model_max_length=None, tokenizer_json=False) -> None:
        """vocab.txt; tokenizer_config.json as it is (written with the case setting where the
        vocab has none), or written for a model of `model_max_length` positions; with
        `tokenizer_json`, BertTokenizerFast's tokenizer.json (vocab/core/bert_tokenizer.py)."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        same = out.resolve() == self.folder.resolve()
        if not same or not (out / VOCAB_TXT).is_file():
            _copy(self.vocab_file, out / VOCAB_TXT)
        config = self.folder / TOKENIZER_CONFIG
        if model_max_length is None and config.is_file():
            if not same:
                _copy(config, out / TOKENIZER_CONFIG)
        elif model_max_length is None:
            write_json_atomic(out / TOKENIZER_CONFIG, self.tokenizer_config(self.lower_case, self.strip_accents))
        else:
            write_json_atomic(out / TOKENIZER_CONFIG, self.tokenizer_config(
                self.lower_case, self.strip_accents, model_max_length=model_max_length), sort_keys=False)
        if tokenizer_json:
            self.save_tokenizer_json(out)

    def save_tokenizer_json(self, folder) -> None:
        """Its fast form as tokenizer.json (BERT's: the same bytes transformers writes for this vocab)."""
        if not (Path(folder) / TOKENIZER_JSON).exists():
            with atomic_path(Path(folder) / TOKENIZER_JSON) as tmp:
                self.fast_tokenizer().save(str(tmp))

    def fast_tokenizer(self):
        """The `tokenizers.Tokenizer` of its tokenizer.json: BertTokenizerFast's."""
        return make_fast_tokenizer(self)

    # -- training -----------------------------------------------------------------------------
    @classmethod
    def least_vocab_size(cls, alphabet, char_counts, character_coverage=0.9999) -> int:
        """The larger of what sentencepiece keeps (its required characters, beside the pieces the
        conversion drops and adds) and what the conversion keeps: the specials and every
        character of the input as c and ##c (vocab/training/convert.py)."""
        spm = required_chars(char_counts, character_coverage) + NUM_SPECIALS - SPM_EXTRA_PIECES + 1
        return max(spm, least_size(alphabet))

    @classmethod
    def sample_words(cls, lower_case, strip_accents, segmenter):
        return BertWords.of(lower_case, strip_accents, segmenter)

    @classmethod
    def conversion_split(cls, lower_case: bool, strip_accents: bool):
        """The words a vocab.txt piece must be one of (None: BERT's split)."""
        return None

    @classmethod
    def train(cls, job: TrainingJob) -> tuple[dict, float]:
        """sentencepiece on the sample's word counts (step "train"; --from-spm: that model
        copied), then vocab.txt (step "convert"); (the conversion's record, training seconds)."""
        trained = job.step("train", lambda: cls._train_spm(job))
        conv = job.step("convert", lambda: cls._convert(job))
        if conv["vocab_size"] < job.vocab_size:
            job.say("warning: %s tokens, fewer than --vocab-size %s: the input has too little text "
                    "for that many pieces", f"{conv['vocab_size']:,}", f"{job.vocab_size:,}", warning=True)
        return conv, trained.get("seconds", 0.0)

    @classmethod
    def _train_spm(cls, job: TrainingJob) -> dict:
        t0 = time.time()
        if job.from_spm is not None:
            _copy(job.from_spm, job.out / SPM_MODEL)
        else:
            info = job.sample
            job.say("training %s on %s words (%s distinct) from %s sentences", job.model_type,
                    f"{info.get('sample_words', 0):,}", f"{info.get('distinct_words', 0):,}",
                    f"{info.get('sample_sentences', 0):,}")
            model = train_sentencepiece(job.work / "sample.tsv", job.work / "spm",
                                        job.vocab_size - NUM_SPECIALS + SPM_EXTRA_PIECES,
                                        job.model_type, job.character_coverage, job.seed,
                                        split_by_script=cls.split_by_script)
            os.replace(job.work / "spm.vocab", job.out / SPM_VOCAB)
            os.replace(model, job.out / SPM_MODEL)
        return {"seconds": round(time.time() - t0, 3)}

    @classmethod
    def _convert(cls, job: TrainingJob) -> dict:
        pieces = read_spm_pieces(job.out / SPM_MODEL)
        if job.has_text:
            alphabet = set(json.loads((job.work / "alphabet.json").read_text(encoding="utf-8")))
        else:
            job.say("no input text (no filtered output, no --input): the alphabet comes from the "
                    "model's pieces only", warning=True)
            alphabet = {c for p in pieces for c in p.lstrip("\u2581") if is_vocab_char(c)}
        tokens, conv = to_wordpiece(pieces, alphabet, job.vocab_size, job.lower_case, job.strip_accents,
                                    split=cls.conversion_split(job.lower_case, job.strip_accents))
        cls.write_vocab(job.out, tokens, job.lower_case, job.strip_accents)
        return conv.as_dict() | {"vocab_size": len(tokens)}


def _copy(src: str | os.PathLike, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)
