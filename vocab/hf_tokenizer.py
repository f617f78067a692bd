"""Any transformers fast tokenizer as a vocabulary: a folder holding `tokenizer.json`.

A folder that `transformers.AutoTokenizer.from_pretrained` loads as a fast tokenizer (XLM-R,
RoBERTa, ModernBERT, mBERT's tokenizer.json, or the byte-level BPE of `pipeline vocab
--model-type bytelevel-bpe`) is read here with the `tokenizers` library alone (no transformers):
its pieces and ids from tokenizer.json, its special tokens from tokenizer_config.json and
special_tokens_map.json (then the post-processor's, then the usual names). `TokenizerSpec` offers
the read-only surface of `VocabSpec` (vocab/spec.py), so encode, masking and the trainer read
either the same way: `size`, `tokens`, `pad_id`, `unk_id`, `cls_id`, `sep_id`, `mask_id`,
`is_special`, `continues_word`, `kind`, `folder`, `fingerprint`, `save_to`.

Nothing assumes BERT's layout: XLM-R pads with 1, a byte-level BPE has no unknown token
(`unk_id` is None), `<s>`/`</s>` stand where [CLS]/[SEP] do. A role the tokenizer lacks (a
GPT-style tokenizer has no mask token) reads as a VocabError naming it; `require_mlm_tokens()`
says so up front.

Usage:
    spec = load_tokenizer_spec("xlm-roberta-base/")    # VocabSpec for a BERT vocab.txt folder
    spec.pad_id, spec.kind, spec.fingerprint           # 1, "unigram", "3f0c..."
    spec.backend()                                     # tokenizers.Tokenizer, text never yields specials
    spec.save_to("hf_model/", model_max_length=512)    # AutoTokenizer loads the same ids there
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .spec import TOKENIZER_CONFIG, VocabError, load_vocab
from .tokenizer_json import (
    ROLES,
    case_of,
    check_config_agrees,
    content,
    model_unk,
    model_vocab,
    pair_type_id,
    read_json,
    resolve_roles,
    word_marks,
)

TOKENIZER_JSON = "tokenizer.json"
SPECIAL_TOKENS_MAP = "special_tokens_map.json"
# Besides tokenizer.json and tokenizer_config.json, what AutoTokenizer may read in a folder
# (save_to copies those present).
OTHER_TOKENIZER_FILES = (SPECIAL_TOKENS_MAP, "added_tokens.json", "vocab.json", "merges.txt",
                         "sentencepiece.bpe.model", "spiece.model", "tokenizer.model", "source.spm")
# Files a slow tokenizer is built from: transformers can convert them to a fast one.
SLOW_TOKENIZER_FILES = ("vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model",
                        "tokenizer.model", "source.spm")
KINDS = {"WordPiece": "wordpiece", "BPE": "bpe", "Unigram": "unigram", "WordLevel": "wordlevel"}
_UNUSED = re.compile(r"\[unused\d+\]")


@dataclass(frozen=True)
class TokenizerSpec:
    """A fast tokenizer's vocabulary and special tokens (see the module doc)."""

    folder: Path
    tokens: tuple[str, ...]            # id -> token, as convert_ids_to_tokens gives ("" in a gap)
    kind: str                          # "wordpiece", "bpe", "unigram", "wordlevel"
    special_tokens: frozenset[str]     # every special/added control token
    role_tokens: dict = field(repr=False)   # role ("pad", "cls", ...) -> token or None
    unk_token: str | None              # what the model emits for unknown text (None: byte-level BPE)
    start_marker: str | None = None    # a piece that starts a word begins with it ("Ġ", "▁")
    cont_prefix: str | None = None     # a piece inside a word begins with it ("##")
    pair_type_id: int = 1              # the segment id the post-processor gives a pair's B
    lower_case: bool = False           # the normaliser lower-cases (the HDF5 folder name says so)
    strip_accents: bool = False
    tokenizer_file: Path | None = None     # None: converted from slow files in memory
    converted_json: str | None = field(default=None, repr=False)

    word_tokenizer = None              # as VocabSpec's: never MeCab words

    # -- the VocabSpec surface ---------------------------------------------------------------

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

    def _role_id(self, role: str) -> int:
        token = self.role_tokens.get(role)
        if token is None:
            raise VocabError(f"{self.folder}: the tokenizer has no {role} token: set {role}_token in "
                             f"its {TOKENIZER_CONFIG}, or use a tokenizer made for masked-LM "
                             "pretraining (BERT, RoBERTa, XLM-R, ModernBERT)")
        return self._index[token]

    @property
    def pad_id(self) -> int:
        return self._role_id("pad")

    @property
    def cls_id(self) -> int:
        return self._role_id("cls")

    @property
    def sep_id(self) -> int:
        return self._role_id("sep")

    @property
    def mask_id(self) -> int:
        return self._role_id("mask")

    @property
    def unk_id(self) -> int | None:
        return None if self.unk_token is None else self._index[self.unk_token]

    def is_special(self, token: str) -> bool:
        """A special or control token (and BERT's [unusedN]): never a real piece of text."""
        return token in self.special_tokens or (token[:7] == "[unused" and bool(_UNUSED.fullmatch(token)))

    def continues_word(self, token: str) -> bool:
        """The piece lies inside a word, not at its start: WordPiece `##x`; a SentencePiece or
        Unigram piece without the leading `▁`; a byte-level BPE piece without the leading `Ġ`.
        A rule on the token's text: the pipeline's word starts come from the tokenizer's word
        ids instead (a byte-level tokenizer without a prefix space starts a sentence without `Ġ`,
        and a punctuation mark after a word is a word of its own there)."""
        if not token or self.is_special(token):
            return False
        if self.cont_prefix is not None:
            return token.startswith(self.cont_prefix)
        if self.start_marker is not None:
            return not token.startswith(self.start_marker)
        return False

    @property
    def fingerprint(self) -> str:
        """What decides the ids (vocab/fingerprint.py), not tokenizer.json's spelling: the same
        for this tokenizer saved by another writer, or for a WordPiece vocab.txt of its ids."""
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            from .fingerprint import fingerprint

            tok = self.backend()
            roles = {r: (None if self.role_tokens.get(r) is None else self._index[self.role_tokens[r]])
                     for r in ("pad", "unk", "cls", "sep", "mask")}
            roles["unk"] = self.unk_id
            fp = fingerprint(self.tokens, roles,
                             lambda texts: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)])
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    @property
    def missing_roles(self) -> list[str]:
        return [r for r in ROLES if r != "unk" and self.role_tokens.get(r) is None]

    def require_mlm_tokens(self) -> None:
        """VocabError (one line) unless the tokenizer has pad, cls, sep and mask tokens."""
        missing = self.missing_roles
        if missing:
            raise VocabError(f"{self.folder}: the tokenizer has no {', '.join(missing)} token"
                             f"{'s' if len(missing) > 1 else ''}, which masked-LM data needs: set "
                             f"{', '.join(m + '_token' for m in missing)} in its {TOKENIZER_CONFIG} "
                             "(tokens of its vocabulary), or use a tokenizer made for masked-LM "
                             "pretraining (BERT, RoBERTa, XLM-R, ModernBERT)")

    # -- the tokenizer -----------------------------------------------------------------------

    def backend(self):
        """The `tokenizers.Tokenizer` (one per process and spec): no padding or truncation, and
        special-token text in the input is read as plain text (`encode_special_tokens`), so a
        Wikipedia sentence that mentions "<s>" never becomes a control token."""
        tok = self.__dict__.get("_backend")
        if tok is None:
            from tokenizers import Tokenizer

            try:
                tok = (Tokenizer.from_str(self.converted_json) if self.converted_json is not None
                       else Tokenizer.from_file(str(self.tokenizer_file)))
            except Exception as exc:   # JSON that the tokenizers library cannot read
                raise VocabError(f"{self.tokenizer_file or self.folder}: the tokenizers library cannot "
                                 f"read it ({str(exc)[:160]}): give the tokenizer.json that "
                                 "transformers' save_pretrained writes") from None
            tok.no_padding()
            tok.no_truncation()
            tok.encode_special_tokens = True
            object.__setattr__(self, "_backend", tok)
        return tok

    def save_to(self, folder: str | os.PathLike, model_max_length: int = 512) -> None:
        """Write what a transformers model folder needs so that AutoTokenizer.from_pretrained
        gives the same ids: tokenizer.json and the folder's other tokenizer files, and
        tokenizer_config.json with `model_max_length` and the special tokens."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        same = out.resolve() == self.folder.resolve()
        if self.converted_json is not None:
            (out / TOKENIZER_JSON).write_text(self.converted_json, encoding="utf-8")
        elif not same:
            shutil.copyfile(self.tokenizer_file, out / TOKENIZER_JSON)
        if not same:
            for name in OTHER_TOKENIZER_FILES:
                if (self.folder / name).is_file():
                    shutil.copyfile(self.folder / name, out / name)
        cfg = read_json(self.folder / TOKENIZER_CONFIG) or {}
        cfg.setdefault("tokenizer_class", "PreTrainedTokenizerFast")
        for role in ROLES:
            if self.role_tokens.get(role) is not None and not cfg.get(f"{role}_token"):
                cfg[f"{role}_token"] = self.role_tokens[role]
        cfg["model_max_length"] = int(model_max_length)
        (out / TOKENIZER_CONFIG).write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")

    # -- pickling: the tokens and settings travel, the Rust tokenizer is rebuilt ---------------

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state):
        self.__dict__.update(state)


def load_tokenizer_spec(path: str | os.PathLike):
    """A vocabulary from a folder (or file): a BERT-layout vocab.txt gives `VocabSpec` (as
    load_vocab); a folder with tokenizer.json and no such vocab.txt gives `TokenizerSpec`; a
    folder with only a slow tokenizer's files is converted by transformers when it is installed.
    Anything else is one VocabError line that says what is wrong and what to do."""
    path = Path(path)
    if not path.exists():
        raise VocabError(f"{path} does not exist: give a transformers tokenizer folder (with "
                         "tokenizer.json) or a WordPiece vocab.txt")
    if path.is_file():
        if path.name == TOKENIZER_JSON:
            return _tokenizer_spec(path.parent, path)
        return load_vocab(path)
    tokenizer_json = path / TOKENIZER_JSON
    if (path / "vocab.txt").is_file():
        try:
            return load_vocab(path)
        except VocabError:
            if not tokenizer_json.is_file():   # a vocab.txt that is not BERT's and nothing else
                raise
    if tokenizer_json.is_file():
        return _tokenizer_spec(path, tokenizer_json)
    slow = [n for n in SLOW_TOKENIZER_FILES if (path / n).is_file()]
    if slow:
        return _tokenizer_spec(path, None, _convert_slow(path, slow))
    raise VocabError(f"{path} holds no tokenizer (no tokenizer.json, no vocab.txt, no "
                     "sentencepiece model): give a transformers tokenizer folder "
                     "(AutoTokenizer.save_pretrained writes tokenizer.json) or a WordPiece vocab.txt")


def _convert_slow(folder: Path, files: list[str]) -> str:
    """tokenizer.json's text for a folder of slow tokenizer files, made by transformers."""
    how = (f"convert it once with: python -c \"from transformers import AutoTokenizer; "
           f"AutoTokenizer.from_pretrained('{folder}').save_pretrained('{folder}')\"")
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise VocabError(f"{folder} holds no tokenizer.json (only {', '.join(files)}) and "
                         f"transformers is not installed to convert it: {how}") from None
    try:
        tok = AutoTokenizer.from_pretrained(str(folder))
    except Exception as exc:   # transformers' own failure on these files, in one line
        raise VocabError(f"{folder} holds no tokenizer.json and transformers cannot load its "
                         f"{', '.join(files)} ({type(exc).__name__}: {str(exc)[:200]})") from None
    backend = getattr(tok, "backend_tokenizer", None)
    if not getattr(tok, "is_fast", False) or backend is None:
        raise VocabError(f"{folder}: transformers loads {', '.join(files)} only as a slow "
                         f"({type(tok).__name__}) tokenizer, not a fast one: give a folder with "
                         "tokenizer.json")
    return backend.to_str()


def _tokenizer_spec(folder: Path, tokenizer_file: Path | None, converted: str | None = None) -> TokenizerSpec:
    """The spec, read from the JSON alone (the Rust tokenizer is built on first use, backend():
    for a 250k vocabulary that is seconds saved in every process that only reads ids)."""
    raw = tokenizer_file.read_bytes() if tokenizer_file is not None else converted.encode("utf-8")
    where = tokenizer_file or folder
    try:
        tj = json.loads(raw)
        model = tj["model"]
        kind = KINDS.get(model.get("type"))
        vocab = model_vocab(model, kind)
    except Exception as exc:   # not JSON, or not the JSON of a tokenizer
        raise VocabError(f"{where} is not a tokenizers tokenizer.json ({type(exc).__name__}: {str(exc)[:160]}): "
                         "give the tokenizer.json that transformers' save_pretrained writes") from None
    if kind is None:
        raise VocabError(f"{where}: tokenizer model {model.get('type')!r} is not one of {', '.join(KINDS)}")
    vocab.update({a["content"]: a["id"] for a in tj.get("added_tokens") or []})
    if not vocab:
        raise VocabError(f"{where}: the tokenizer has an empty vocabulary")
    tokens = [""] * (max(vocab.values()) + 1)
    for t, i in vocab.items():
        tokens[i] = t
    added = tj.get("added_tokens") or []
    config = {**(read_json(folder / SPECIAL_TOKENS_MAP) or {}), **(read_json(folder / TOKENIZER_CONFIG) or {})}
    check_config_agrees(config, tj, folder)
    roles = resolve_roles(config, tj, vocab)
    special = {a["content"] for a in added if a.get("special")}
    special |= {t for t in roles.values() if t is not None}
    for key in ("additional_special_tokens", "extra_special_tokens"):
        extra = config.get(key)
        if isinstance(extra, dict):
            extra = list(extra.values())
        special |= {c for c in map(content, extra or []) if c in vocab}
    for key in ("bos_token", "eos_token"):
        c = content(config.get(key))
        if c in vocab:
            special.add(c)
    start_marker, cont_prefix = word_marks(tj, kind)
    lower, strip = case_of(tj.get("normalizer"))
    return TokenizerSpec(
        folder=folder, tokens=tuple(tokens), kind=kind,
        special_tokens=frozenset(special), role_tokens=roles, unk_token=model_unk(model, tokens, vocab),
        start_marker=start_marker, cont_prefix=cont_prefix, pair_type_id=pair_type_id(tj.get("post_processor")),
        lower_case=lower, strip_accents=strip, tokenizer_file=tokenizer_file,
        converted_json=converted)


def tokenizer_suffix(spec) -> str:
    """The suffix of an HDF5 folder encoded with `spec`'s tokenizer: its folder's name and the
    start of its fingerprint (`_tok-xlm-roberta-base-3f0c1a2b`), so two tokenizers never share
    a folder."""
    name = re.sub(r"[^A-Za-z0-9.-]+", "-", spec.folder.resolve().name).strip("-.")[:40] or spec.kind
    return f"_tok-{name}-{spec.fingerprint[:8]}"
