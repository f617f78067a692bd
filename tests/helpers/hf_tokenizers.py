"""Transformers fast tokenizers built here, offline, with the `tokenizers` library: one of each
kind the pipeline takes (WordPiece as BERT's tokenizer.json, byte-level BPE as RoBERTa's,
Unigram as XLM-R's, which pads with 1), saved as transformers folders."""
from __future__ import annotations

from pathlib import Path


def _save(tok, folder: Path, tokenizer_class: str | None = None, config: dict | None = None,
          **specials) -> Path:
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **specials)
    fast.save_pretrained(str(folder))
    if tokenizer_class:   # as the model's own folder names it (XLMRobertaTokenizer, ...)
        import json

        cfg_file = folder / "tokenizer_config.json"
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        cfg["tokenizer_class"] = tokenizer_class
        cfg.update(config or {})
        cfg_file.write_text(json.dumps(cfg), encoding="utf-8")
    return folder


def wordpiece_tokenizer(folder: Path, texts: list[str], vocab_size: int = 600) -> Path:
    """BERT's tokenizer.json layout (no vocab.txt): [PAD] 0, [UNK] [CLS] [SEP] [MASK]."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials,
                                                             show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    # BertTokenizer's do_lower_case defaults to True and overrides tokenizer.json: say it, as
    # bert-base-cased's folder does
    return _save(tok, folder, "BertTokenizer", {"do_lower_case": False}, pad_token="[PAD]", unk_token="[UNK]",
                 cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def bytelevel_bpe_tokenizer(folder: Path, texts: list[str], vocab_size: int = 600,
                            mask: bool = True) -> Path:
    """RoBERTa's layout: <s> 0, <pad> 1, </s> 2, <unk> 3, byte pieces, merges, <mask> last."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer)
    specials = dict(bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
                    cls_token="<s>", sep_token="</s>")
    if mask:
        tok.add_special_tokens(["<mask>"])
        specials["mask_token"] = "<mask>"
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=True)
    # transformers' RobertaTokenizer rebuilds the pre-tokenizer from add_prefix_space (default False)
    return _save(tok, folder, "RobertaTokenizer" if mask else None, {"add_prefix_space": True}, **specials)


def unigram_tokenizer(folder: Path, texts: list[str], vocab_size: int = 600) -> Path:
    """XLM-R's layout: <s> 0, <pad> 1, </s> 2, <unk> 3, Metaspace Unigram pieces, <mask> last;
    its pair is <s> A </s></s> B </s>, all of segment 0. The pipeline is the one transformers'
    XLMRobertaTokenizer builds (it rebuilds it from its own code, whatever tokenizer.json says)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Metaspace(prepend_scheme="always")])
    tok.decoder = decoders.Metaspace(prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(texts, trainer)
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    return _save(tok, folder, "XLMRobertaTokenizer", bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                 unk_token="<unk>", cls_token="<s>", sep_token="</s>", mask_token="<mask>")


BUILDERS = {"wordpiece": wordpiece_tokenizer, "bpe": bytelevel_bpe_tokenizer, "unigram": unigram_tokenizer}
