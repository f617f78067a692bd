"""A WordPiece vocabulary on disk: vocab.txt, its case setting, and BERT's special tokens.

The vocab folder holds `vocab.txt` (one token a line, the id is the line number) and
`tokenizer_config.json` with the case setting (`do_lower_case`, `strip_accents`), the same file
Hugging Face's BertTokenizerFast reads. A bare vocab.txt with no config beside it means cased.
The special tokens sit where Google's BERT vocabs have them (`bert_specials()`); code reads
their ids from the vocab (`spec.cls_id`, ...), never hard-codes them.

Usage:
    spec = load_vocab("data/hu/vocab")        # VocabError with a one-line reason if unusable
    spec.tokens, spec.mask_id, spec.lower_case
    spec.fingerprint, spec.save_to("hf_model/", model_max_length=512)
    spec = load_tokenizer_spec("xlm-roberta-base/")   # any vocab: this, or a fast tokenizer
                                                      # folder (TokenizerSpec, vocab/hf_tokenizer.py)

VocabSpec and TokenizerSpec share one read-only surface (size, tokens, pad_id, unk_id, cls_id,
sep_id, mask_id, is_special, continues_word, kind, folder, fingerprint, save_to): code that
must take any tokenizer reads only that.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
TOKENIZER_CONFIG = "tokenizer_config.json"
NUM_UNUSED = 99


def bert_specials() -> list[str]:
    """[PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK]: ids 0..103 as in Google's vocabs."""
    return ["[PAD]"] + [f"[unused{i}]" for i in range(NUM_UNUSED)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


NUM_SPECIALS = NUM_UNUSED + 5


class VocabError(ValueError):
    """The vocab file or folder is unusable; the message says why and what to do."""


@dataclass(frozen=True)
class VocabSpec:
    vocab_file: Path
    tokens: tuple[str, ...]
    lower_case: bool = False
    strip_accents: bool = False
    # "mecab": text is split into MeCab words before WordPiece (transformers'
    # BertJapaneseTokenizer); None: BERT's basic split (BertTokenizer)
    word_tokenizer: str | None = None

    @property
    def size(self) -> int:
        return len(self.tokens)

    def id_of(self, token: str) -> int:
        return self._index[token]

    @property
    def _index(self) -> dict[str, int]:
        idx = self.__dict__.get("_idx")
        if idx is None:
            idx = {t: i for i, t in enumerate(self.tokens)}
            object.__setattr__(self, "_idx", idx)
        return idx

    @property
    def pad_id(self) -> int:
        return self.id_of("[PAD]")

    @property
    def unk_id(self) -> int:
        return self.id_of("[UNK]")

    @property
    def cls_id(self) -> int:
        return self.id_of("[CLS]")

    @property
    def sep_id(self) -> int:
        return self.id_of("[SEP]")

    @property
    def mask_id(self) -> int:
        return self.id_of("[MASK]")

    def is_special(self, token: str) -> bool:
        """[PAD] [UNK] [CLS] [SEP] [MASK] and the [unusedN] slots: never real word pieces."""
        return token in SPECIAL_TOKENS or (token.startswith("[unused") and token.endswith("]"))

    # -- the surface shared with TokenizerSpec (vocab/hf_tokenizer.py) -------------------------

    kind = "wordpiece"
    pair_type_id = 1          # B's segment id in a pair, as BERT's post-processor gives it

    @property
    def folder(self) -> Path:
        return self.vocab_file.parent

    def continues_word(self, token: str) -> bool:
        """A `##` piece: inside a word, not its start."""
        return token.startswith("##") and not self.is_special(token)

    @property
    def fingerprint(self) -> str:
        """What decides the ids (vocab/fingerprint.py): the same for this vocab written as a
        tokenizer.json, different when an id would change."""
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            from .fingerprint import fingerprint
            from .tokenizer import make_tokenizer

            tok = make_tokenizer(self)
            roles = {"pad": self.pad_id, "unk": self.unk_id, "cls": self.cls_id, "sep": self.sep_id,
                     "mask": self.mask_id}
            fp = fingerprint(self.tokens, roles,
                             lambda texts: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
                             {"word_tokenizer": self.word_tokenizer} if self.word_tokenizer else None)
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    def require_mlm_tokens(self) -> None:
        """A BERT vocab always has them (load_vocab checked)."""

    def save_to(self, folder: str | os.PathLike, model_max_length: int = 512) -> None:
        """vocab.txt and tokenizer_config.json (the case setting) as the trainer's export writes
        them, plus tokenizer.json (BertTokenizerFast's, vocab/tokenizer.py; none for MeCab
        words, which only transformers' BertJapaneseTokenizer does), so that
        AutoTokenizer.from_pretrained(folder) gives the same ids."""
        import shutil

        from .tokenizer import make_fast_tokenizer

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        if out.resolve() != self.folder.resolve() or not (out / "vocab.txt").is_file():
            shutil.copyfile(self.vocab_file, out / "vocab.txt")
        cfg = tokenizer_config(self.lower_case, self.strip_accents, model_max_length=model_max_length,
                               word_tokenizer=self.word_tokenizer)
        (out / TOKENIZER_CONFIG).write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
        if self.word_tokenizer is None:
            make_fast_tokenizer(self).save(str(out / "tokenizer.json"))


def load_tokenizer_spec(path: str | os.PathLike):
    """VocabSpec for a BERT vocab.txt (or its folder), TokenizerSpec for a folder holding a
    transformers fast tokenizer (tokenizer.json): see vocab/hf_tokenizer.py."""
    from .hf_tokenizer import load_tokenizer_spec as load

    return load(path)


def __getattr__(name: str):
    if name == "TokenizerSpec":   # re-exported without importing it for every VocabSpec user
        from .hf_tokenizer import TokenizerSpec

        return TokenizerSpec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_vocab_file(path: str | os.PathLike) -> Path:
    path = Path(path)
    vocab_file = path / "vocab.txt" if path.is_dir() else path
    if not vocab_file.is_file():
        raise VocabError(f"no vocab.txt at {path}: run `pipeline vocab` first or pass --vocab PATH")
    return vocab_file


def load_vocab(path: str | os.PathLike) -> VocabSpec:
    """Read vocab.txt (or the folder holding it) and its recorded case setting; validate it."""
    vocab_file = resolve_vocab_file(path)
    try:
        with open(vocab_file, encoding="utf-8") as fh:
            tokens = tuple(line.rstrip("\n").rstrip("\r") for line in fh)
    except UnicodeDecodeError:
        raise VocabError(f"{vocab_file} is not UTF-8 text: give a WordPiece vocab.txt") from None
    while tokens and tokens[-1] == "":
        tokens = tokens[:-1]
    if not tokens:
        raise VocabError(f"{vocab_file} is empty: give a WordPiece vocab.txt")
    missing = [t for t in SPECIAL_TOKENS if t not in tokens]
    if missing:
        raise VocabError(f"{vocab_file} lacks {', '.join(missing)}: not a BERT vocab; "
                         "rebuild it with `pipeline vocab`")
    if tokens[0] != "[PAD]":
        raise VocabError(f"{vocab_file}: [PAD] must be id 0 (line 1), found {tokens[0]!r}; "
                         "rebuild it with `pipeline vocab`")
    seen: set[str] = set()
    for i, t in enumerate(tokens):
        if t in seen:
            raise VocabError(f"{vocab_file}: token {t!r} appears twice (line {i + 1}); "
                             "a WordPiece vocab needs distinct tokens")
        seen.add(t)
    lower_case, strip_accents = read_case_setting(vocab_file.parent)
    return VocabSpec(vocab_file=vocab_file, tokens=tokens, lower_case=lower_case,
                     strip_accents=strip_accents,
                     word_tokenizer=read_word_tokenizer(vocab_file.parent))


def read_case_setting(folder: str | os.PathLike) -> tuple[bool, bool]:
    """(lower_case, strip_accents) from tokenizer_config.json; cased when there is none."""
    cfg_file = Path(folder) / TOKENIZER_CONFIG
    if not cfg_file.is_file():
        return False, False
    with open(cfg_file, encoding="utf-8") as fh:
        cfg = json.load(fh)
    lower = bool(cfg.get("do_lower_case", False))
    strip = cfg.get("strip_accents")
    if cfg.get("tokenizer_class") == "BertJapaneseTokenizer":
        return lower, False   # its MeCab words keep accents
    # Hugging Face reads strip_accents=None as "follow do_lower_case"; we write it explicitly.
    strip = lower if strip is None else bool(strip)
    return lower, strip


def read_word_tokenizer(folder: str | os.PathLike) -> str | None:
    """"mecab" when tokenizer_config.json names BertJapaneseTokenizer with MeCab words, else None."""
    cfg_file = Path(folder) / TOKENIZER_CONFIG
    if not cfg_file.is_file():
        return None
    with open(cfg_file, encoding="utf-8") as fh:
        cfg = json.load(fh)
    if cfg.get("tokenizer_class") != "BertJapaneseTokenizer":
        return None
    kind = cfg.get("word_tokenizer_type", "basic")
    dic = (cfg.get("mecab_kwargs") or {}).get("mecab_dic", "ipadic")
    if kind != "mecab" or dic != "unidic_lite" or cfg.get("subword_tokenizer_type", "wordpiece") != "wordpiece":
        raise VocabError(f"{cfg_file}: a BertJapaneseTokenizer with {kind} words "
                         f"({dic}) is not supported: only MeCab words with unidic_lite and wordpiece")
    return "mecab"


# transformers' Japanese BERT tokenizer: MeCab through fugashi on unidic-lite, NFKC first
JAPANESE_TOKENIZER = {
    "tokenizer_class": "BertJapaneseTokenizer",
    "word_tokenizer_type": "mecab",
    "subword_tokenizer_type": "wordpiece",
    "mecab_kwargs": {"mecab_dic": "unidic_lite"},
}


def tokenizer_config(lower_case: bool, strip_accents: bool, model_max_length: int = 512,
                     word_tokenizer: str | None = None) -> dict:
    """The tokenizer_config.json that records the case setting for us and for transformers;
    with word_tokenizer="mecab", transformers' BertJapaneseTokenizer on MeCab words."""
    if word_tokenizer == "mecab":
        if strip_accents:
            raise VocabError("a MeCab vocab cannot strip accents (transformers' Japanese "
                             "tokenizer has no such option): leave out --strip-accents")
        return {**JAPANESE_TOKENIZER, "do_lower_case": bool(lower_case),
                "model_max_length": model_max_length,
                "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                "cls_token": "[CLS]", "mask_token": "[MASK]"}
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": bool(lower_case),
        "strip_accents": bool(strip_accents),
        "tokenize_chinese_chars": True,
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length,
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    }
