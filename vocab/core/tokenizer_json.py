"""What a transformers tokenizer folder says besides its pieces: the special tokens of each role
(tokenizer_config.json, special_tokens_map.json, the post-processor of tokenizer.json, the
usual names), the model's unknown token, how a piece marks a word's start or continuation, the
normaliser's case setting and the segment id of a pair's second text. Read from the JSON, for
the fast tokenizer kinds (vocab/kinds/fast.py).
"""
from __future__ import annotations

from pathlib import Path

from vocab.core.layout import ROLES, VocabError

# Files a slow tokenizer is built from: transformers can convert them to a fast one.
SLOW_TOKENIZER_FILES = ("vocab.json", "merges.txt", "sentencepiece.bpe.model", "spiece.model",
                        "tokenizer.model", "source.spm")
# The usual names of each role, tried last (BERT's, then RoBERTa's/XLM-R's).
ROLE_NAMES = {"pad": ("[PAD]", "<pad>"), "unk": ("[UNK]", "<unk>"), "cls": ("[CLS]", "<s>", "<cls>"),
              "sep": ("[SEP]", "</s>", "<sep>"), "mask": ("[MASK]", "<mask>")}


def content(value) -> str | None:
    """A token as tokenizer_config.json writes it: a string or an AddedToken dict."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def resolve_roles(config: dict, tj: dict, vocab: dict) -> dict:
    """role -> token: the configured one (cls falls back to bos, sep to eos), then the
    post-processor's, then the usual names; only tokens of the vocabulary count."""
    pp_cls, pp_sep = _post_processor_specials(tj.get("post_processor"))
    roles = {}
    for role in ROLES:
        candidates = [content(config.get(f"{role}_token"))]
        if role == "cls":
            candidates += [content(config.get("bos_token")), pp_cls]
        elif role == "sep":
            candidates += [content(config.get("eos_token")), pp_sep]
        candidates += list(ROLE_NAMES[role])
        roles[role] = next((c for c in candidates if c is not None and c in vocab), None)
    return roles


def _post_processor_specials(pp) -> tuple[str | None, str | None]:
    """(cls, sep) as the post-processor puts them around one sequence."""
    if not isinstance(pp, dict):
        return None, None
    kind = pp.get("type")
    if kind in ("RobertaProcessing", "BertProcessing"):
        return (pp.get("cls") or [None])[0], (pp.get("sep") or [None])[0]
    if kind == "TemplateProcessing":
        before, after, seen = None, None, False
        for piece in pp.get("single") or []:
            if "Sequence" in piece:
                seen = True
            elif "SpecialToken" in piece:
                tid = piece["SpecialToken"].get("id")
                if not seen and before is None:
                    before = tid
                elif seen:
                    after = tid
        return before, after
    if kind == "Sequence":
        for sub in pp.get("processors") or []:
            found = _post_processor_specials(sub)
            if found != (None, None):
                return found
    return None, None


def _components(node, kinds: tuple[str, ...]):
    """The pre-tokenizers / decoders / normalizers of `node` (a Sequence is opened)."""
    if not isinstance(node, dict):
        return
    if node.get("type") == "Sequence":
        for key in ("pretokenizers", "decoders", "normalizers", "processors"):
            for sub in node.get(key) or []:
                yield from _components(sub, kinds)
    elif node.get("type") in kinds:
        yield node


def word_marks(tj: dict) -> tuple[str | None, str | None]:
    """(start marker, continuation prefix) of the pieces: "Ġ" for byte-level, the Metaspace
    replacement ("▁"), WordPiece's "##" (or a BPE's continuing_subword_prefix)."""
    model = tj.get("model") or {}
    if model.get("type") == "WordPiece":
        return None, model.get("continuing_subword_prefix") or "##"
    if model.get("type") == "BPE" and model.get("continuing_subword_prefix"):
        return None, model["continuing_subword_prefix"]
    for part in ("pre_tokenizer", "decoder"):
        for node in _components(tj.get(part), ("ByteLevel", "Metaspace")):
            if node["type"] == "ByteLevel":
                return "\u0120", None
            return node.get("replacement") or "\u2581", None
    return None, None


def case_of(normalizer) -> tuple[bool, bool]:
    """(lower-cases, strips accents) as the normaliser does."""
    lower = strip = False
    for node in _components(normalizer, ("BertNormalizer", "Lowercase", "StripAccents")):
        if node["type"] == "BertNormalizer":
            lower = lower or bool(node.get("lowercase"))
            s = node.get("strip_accents")
            strip = strip or (bool(node.get("lowercase")) if s is None else bool(s))
        elif node["type"] == "Lowercase":
            lower = True
        else:
            strip = True
    return lower, strip


def pair_type_id(pp) -> int:
    """The segment id the post-processor gives the second text of a pair: BERT's 1 (also the
    tokenizers library's default), RoBERTa's and XLM-R's 0 (their models have one token type)."""
    if not isinstance(pp, dict):
        return 1
    kind = pp.get("type")
    if kind == "RobertaProcessing":
        return 0
    if kind == "TemplateProcessing":
        for piece in pp.get("pair") or []:
            seq = piece.get("Sequence") if isinstance(piece, dict) else None
            if seq and seq.get("id") == "B":
                return int(seq.get("type_id", 0))
    if kind == "Sequence":
        for sub in pp.get("processors") or []:
            if isinstance(sub, dict) and sub.get("type") in ("RobertaProcessing", "TemplateProcessing",
                                                            "BertProcessing"):
                return pair_type_id(sub)
    return 1


# transformers' BERT-like tokenizer classes rebuild tokenizer.json's BertNormalizer from
# tokenizer_config.json's do_lower_case (default True) and strip_accents (default: follow it)
BERT_LIKE_CLASSES = {f"{name}Tokenizer{fast}" for name in (
    "Bert", "DistilBert", "Electra", "MobileBert", "SqueezeBert", "LayoutLM", "Funnel", "ConvBert",
    "MPNet", "RetriBert") for fast in ("", "Fast")}


# ... and the byte-level ones its ByteLevel pre-tokenizer from add_prefix_space (default False)
BYTE_LEVEL_CLASSES = {f"{name}Tokenizer{fast}" for name in (
    "Roberta", "GPT2", "Bart", "Longformer", "LED", "Deberta") for fast in ("", "Fast")}


def check_config_agrees(config: dict, tj: dict, where) -> None:
    """VocabError when transformers' class for the folder would tokenize other than tokenizer.json
    does, as far as it is known here: a BERT-like class takes its case from tokenizer_config.json
    (do_lower_case, strip_accents), a byte-level one its prefix space (add_prefix_space)."""
    cls = config.get("tokenizer_class")
    if cls in BYTE_LEVEL_CLASSES:
        for node in _components(tj.get("pre_tokenizer"), ("ByteLevel",)):
            want = bool(config.get("add_prefix_space", False))
            if bool(node.get("add_prefix_space")) != want:
                raise VocabError(
                    f"{where}: tokenizer_config.json ({cls}) has add_prefix_space={want} but "
                    f"tokenizer.json's ByteLevel pre-tokenizer has {not want}: transformers would give "
                    "other ids than tokenizer.json; set add_prefix_space in tokenizer_config.json to agree")
    if cls in BERT_LIKE_CLASSES:
        _check_case_agrees(config, tj.get("normalizer"), where)


def _check_case_agrees(config: dict, normalizer, where) -> None:
    if not any(True for _ in _components(normalizer, ("BertNormalizer",))):
        return
    lower = bool(config.get("do_lower_case", True))
    strip = config.get("strip_accents")
    strip = lower if strip is None else bool(strip)
    if (lower, strip) != case_of(normalizer):
        have = case_of(normalizer)
        raise VocabError(
            f"{where}: tokenizer_config.json ({config['tokenizer_class']}) has do_lower_case={lower}, "
            f"strip_accents={strip}{' (the defaults)' if 'do_lower_case' not in config else ''} but "
            f"tokenizer.json's normaliser lower-cases={have[0]}, strips accents={have[1]}: "
            "transformers would give other ids than tokenizer.json; make the two agree "
            "(set do_lower_case and strip_accents in tokenizer_config.json)")


def convert_slow(folder: Path, files: list[str]) -> str:
    """tokenizer.json's text for a folder of slow tokenizer files, made by transformers."""
    how = (f"convert it once with: python -c \"from transformers import AutoTokenizer; "
           f"AutoTokenizer.from_pretrained('{folder}').save_pretrained('{folder}')\"")
    try:   # transformers is optional and slow to import: only a folder of slow files needs it
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
