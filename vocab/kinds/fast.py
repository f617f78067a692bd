"""The kind `fast`: any transformers fast tokenizer, a folder holding `tokenizer.json` (or a slow
tokenizer's files, which transformers converts), and the base of the other tokenizer.json kinds
(`bytelevel-bpe`, `unigram`).

A folder that `transformers.AutoTokenizer.from_pretrained` loads as a fast tokenizer (XLM-R,
RoBERTa, ModernBERT, mBERT's tokenizer.json, or the byte-level BPE of `pipeline vocab
--model-type bytelevel-bpe`) is read here with the `tokenizers` library alone (no transformers):
its pieces and ids from tokenizer.json, its special tokens from tokenizer_config.json and
special_tokens_map.json (then the post-processor's, then the usual names: vocab/core/tokenizer_json.py).

Nothing assumes BERT's layout: XLM-R pads with 1, a byte-level BPE has no unknown token
(`unk_id` is None), `<s>`/`</s>` stand where [CLS]/[SEP] do. A role the tokenizer lacks (a
GPT-style tokenizer has no mask token) reads as a VocabError naming it; `check_usable()` says so
up front. Its data records it: the fingerprint as each HDF5 file's attribute, `_tok-NAME-HASH`
at the end of the folder name. Its encoder is the Rust library's `encode_batch`
(vocab/core/tokenizers_encoder.py); its words for the reports are BERT's, its pieces laid over
them (vocab/core/word_align.py).

Usage:
    spec = load_tokenizer("xlm-roberta-base/")        # vocab.kinds: this kind's UnigramTokenizer
    spec.pad_id, spec.piece_model, spec.fingerprint   # 1, "unigram", "3f0c..."
    spec.backend()                                    # tokenizers.Tokenizer, text never yields specials
    spec.save("hf_model/", model_max_length=512)      # AutoTokenizer loads the same ids there
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tokenizers import Tokenizer

from common.atomic import atomic_path, write_json_atomic, write_text_atomic
from vocab.core.fingerprint import fingerprint
from vocab.core.layout import (
    DEFAULT_MAX_LENGTH,
    ROLES,
    SPECIAL_TOKENS_MAP,
    TOKENIZER_CONFIG,
    TOKENIZER_JSON,
    VocabError,
    read_json,
)
from vocab.core.segmenters import load_segmenter
from vocab.core.tokenizer_json import (
    case_of,
    check_config_agrees,
    content,
    pair_type_id,
    resolve_roles,
    word_marks,
)
from vocab.core.tokenizers_encoder import TokenizerEncoder
from vocab.core.word_align import aligned_word_pieces
from vocab.kinds.base import Found, TokenizerKind

# Besides tokenizer.json and tokenizer_config.json, what AutoTokenizer may read in a folder
# (save copies those present).
OTHER_TOKENIZER_FILES = (SPECIAL_TOKENS_MAP, "added_tokens.json", "vocab.json", "merges.txt",
                         "sentencepiece.bpe.model", "spiece.model", "tokenizer.model", "source.spm")
PIECE_MODELS = {"WordPiece": "wordpiece", "BPE": "bpe", "Unigram": "unigram", "WordLevel": "wordlevel"}
_UNUSED = re.compile(r"\[unused\d+\]")


@dataclass(frozen=True)
class TokenizerSpec(TokenizerKind):
    """A fast tokenizer's vocabulary and special tokens (see the module doc)."""

    folder: Path
    tokens: tuple[str, ...]            # id -> token, as convert_ids_to_tokens gives ("" in a gap)
    special_tokens: frozenset[str]     # every special/added control token
    role_tokens: dict = field(repr=False)   # role ("pad", "cls", ...) -> token or None
    unk_token: str | None = None       # what the model emits for unknown text (None: byte-level BPE)
    piece_model: str = "bpe"           # "wordpiece", "bpe", "unigram", "wordlevel"
    start_marker: str | None = None    # a piece that starts a word begins with it ("Ġ", "▁")
    cont_prefix: str | None = None     # a piece inside a word begins with it ("##")
    pair_type_id: int = 1              # the segment id the post-processor gives a pair's B
    lower_case: bool = False           # the normaliser lower-cases (the HDF5 folder name says so)
    strip_accents: bool = False
    tokenizer_file: Path | None = None     # None: converted from slow files in memory
    converted_json: str | None = field(default=None, repr=False)

    kind = "fast"
    description = ("any transformers fast tokenizer (a folder with tokenizer.json: WordPiece, BPE, "
                   "WordLevel; or a slow tokenizer's files, converted by transformers): `encode --tokenizer`")
    records_in_data = True

    # -- finding and loading ----------------------------------------------------------------
    @classmethod
    def claims(cls, found: Found) -> bool:
        return found.tokenizer_file is not None or bool(found.slow_files)

    @classmethod
    def model_vocab(cls, model: dict) -> dict[str, int]:
        """token -> id of the model's own vocabulary."""
        return dict(model.get("vocab") or {})

    @classmethod
    def model_unk(cls, model: dict, tokens: list[str], vocab: dict) -> str | None:
        unk = model.get("unk_token")
        return unk if unk in vocab else None

    @classmethod
    def load(cls, found: Found) -> TokenizerSpec:
        """The spec, read from the JSON alone (the Rust tokenizer is built on first use, backend():
        for a 250k vocabulary that is seconds saved in every process that only reads ids)."""
        tj, folder = found.tokenizer_json, found.folder
        where = found.tokenizer_file or folder
        model = tj["model"]
        piece_model = PIECE_MODELS.get(model.get("type"))
        if piece_model is None:
            raise VocabError(f"{where}: tokenizer model {model.get('type')!r} is not one of {', '.join(PIECE_MODELS)}")
        try:
            vocab = cls.model_vocab(model)
        except Exception as exc:   # not the JSON of a tokenizer
            raise VocabError(f"{where} is not a tokenizers tokenizer.json ({type(exc).__name__}: "
                             f"{str(exc)[:160]}): give the tokenizer.json that transformers' "
                             "save_pretrained writes") from None
        added = tj.get("added_tokens") or []
        vocab.update({a["content"]: a["id"] for a in added})
        if not vocab:
            raise VocabError(f"{where}: the tokenizer has an empty vocabulary")
        tokens = [""] * (max(vocab.values()) + 1)
        for t, i in vocab.items():
            tokens[i] = t
        config = {**(read_json(folder / SPECIAL_TOKENS_MAP) or {}), **found.config}
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
        start_marker, cont_prefix = word_marks(tj)
        lower, strip = case_of(tj.get("normalizer"))
        return cls(
            folder=folder, tokens=tuple(tokens), piece_model=piece_model,
            special_tokens=frozenset(special), role_tokens=roles, unk_token=cls.model_unk(model, tokens, vocab),
            start_marker=start_marker, cont_prefix=cont_prefix, pair_type_id=pair_type_id(tj.get("post_processor")),
            lower_case=lower, strip_accents=strip, tokenizer_file=found.tokenizer_file,
            converted_json=None if found.tokenizer_file else found.tokenizer_text)

    # -- the ids ------------------------------------------------------------------------------
    def role_id(self, role: str) -> int | None:
        if role == "unk":   # what the model emits for unknown text; a byte-level BPE has none
            return None if self.unk_token is None else self._index[self.unk_token]
        token = self.role_tokens.get(role)
        if token is None:
            raise VocabError(f"{self.folder}: the tokenizer has no {role} token: set {role}_token in "
                             f"its {TOKENIZER_CONFIG}, or use a tokenizer made for masked-LM "
                             "pretraining (BERT, RoBERTa, XLM-R, ModernBERT)")
        return self._index[token]

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

    def piece_key(self, token: str) -> tuple[bytes, bool]:
        if self.start_marker is not None:
            starts = token.startswith(self.start_marker)
            return (token[len(self.start_marker):] if starts else token).encode(), starts
        if self.cont_prefix is not None and token.startswith(self.cont_prefix):
            return token[len(self.cont_prefix):].encode(), False
        return token.encode(), True

    @property
    def missing_roles(self) -> list[str]:
        return [r for r in ROLES if r != "unk" and self.role_tokens.get(r) is None]

    def check_usable(self) -> None:
        """VocabError (one line) unless the tokenizer has pad, cls, sep and mask tokens, and the
        tokenizers library reads its tokenizer.json."""
        missing = self.missing_roles
        if missing:
            raise VocabError(f"{self.folder}: the tokenizer has no {', '.join(missing)} token"
                             f"{'s' if len(missing) > 1 else ''}, which masked-LM data needs: set "
                             f"{', '.join(m + '_token' for m in missing)} in its {TOKENIZER_CONFIG} "
                             "(tokens of its vocabulary), or use a tokenizer made for masked-LM "
                             "pretraining (BERT, RoBERTa, XLM-R, ModernBERT)")
        self.backend()

    # -- what records it ----------------------------------------------------------------------
    @property
    def files(self) -> list[Path]:
        names = (TOKENIZER_JSON, TOKENIZER_CONFIG, SPECIAL_TOKENS_MAP)
        return [self.folder / n for n in names if (self.folder / n).is_file()]

    @property
    def fingerprint(self) -> str:
        """What decides the ids (vocab/core/fingerprint.py), not tokenizer.json's spelling: the
        same for this tokenizer saved by another writer, or for a WordPiece vocab.txt of its ids."""
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            tok = self.backend()
            roles = self.role_ids()
            fp = fingerprint(self.tokens, roles,
                             lambda texts: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)])
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    def report_record(self, segmenter):
        return {"kind": self.piece_model, **super().report_record(segmenter)}

    def folder_suffix(self) -> str:
        """Its folder's name and the start of its fingerprint (`_tok-xlm-roberta-base-3f0c1a2b`),
        so two tokenizers never share a folder."""
        name = re.sub(r"[^A-Za-z0-9.-]+", "-", self.folder.resolve().name).strip("-.")[:40] or self.piece_model
        return f"_tok-{name}-{self.fingerprint[:8]}"

    # -- the tokenizer -----------------------------------------------------------------------
    def backend(self) -> Tokenizer:
        """The `tokenizers.Tokenizer` (one per process and spec): no padding or truncation, and
        special-token text in the input is read as plain text (`encode_special_tokens`), so a
        Wikipedia sentence that mentions "<s>" never becomes a control token."""
        tok = self.__dict__.get("_backend")
        if tok is None:
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

    def make_encoder(self, segmenter):
        return TokenizerEncoder(self, load_segmenter(segmenter) if segmenter else None)

    def word_pieces(self, sentences, segmenter=None, batch_size=1000):
        return aligned_word_pieces(self, sentences, segmenter, batch_size)

    def word_ids(self, words):
        words = list(words)
        return [e.ids for e in self.backend().encode_batch(words, add_special_tokens=False)] if words else []

    def save(self, folder, model_max_length=None, tokenizer_json=False) -> None:
        """tokenizer.json and the folder's other tokenizer files, and tokenizer_config.json with
        `model_max_length` (512 where no model says) and the special tokens."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        same = out.resolve() == self.folder.resolve()
        if self.converted_json is not None:
            write_text_atomic(out / TOKENIZER_JSON, lambda fh: fh.write(self.converted_json))
        elif not same:
            _copy(self.tokenizer_file, out / TOKENIZER_JSON)
        if not same:
            for name in OTHER_TOKENIZER_FILES:
                if (self.folder / name).is_file():
                    _copy(self.folder / name, out / name)
        cfg = read_json(self.folder / TOKENIZER_CONFIG) or {}
        cfg.setdefault("tokenizer_class", "PreTrainedTokenizerFast")
        for role in ROLES:
            if self.role_tokens.get(role) is not None and not cfg.get(f"{role}_token"):
                cfg[f"{role}_token"] = self.role_tokens[role]
        cfg["model_max_length"] = int(model_max_length or DEFAULT_MAX_LENGTH)
        write_json_atomic(out / TOKENIZER_CONFIG, cfg, sort_keys=False)


def _copy(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)
