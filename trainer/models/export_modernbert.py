"""The ModernBERT side of `python -m trainer.export`: transformers' ModernBertForMaskedLM folder.

    config = read_config(ckpt, spec)            # ModernBertConfig from meta.json, the vocab's ids
    n_params = save(ckpt, config, folder, weights)

The trainer's ModernBertForPreTraining is ModernBertForMaskedLM with another forward, so the
weights load into transformers' class unchanged (strictly: a checkpoint of another shape is
refused) and its save_pretrained writes config.json and model.safetensors, the decoder tied to
the embeddings. `AutoModelForMaskedLM.from_pretrained(folder)` then gives the trainer's logits.

transformers' AutoTokenizer ignores tokenizer_config.json's BertTokenizer for a `modernbert`
config and wants tokenizer.json, so the folder gets the fast BERT tokenizer's serialization too
(the same normalizer, word pieces and [CLS] ... [SEP] template).
"""
from __future__ import annotations

import json
from pathlib import Path


def read_config(ckpt: Path, spec):
    from trainer.export import ExportError
    from trainer.models.modernbert import config_from_dict

    meta_file = ckpt / "meta.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        config = config_from_dict(meta["bert_config"], source=f"{meta_file} (bert_config)")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ExportError(f"{meta_file}: no usable ModernBERT config ({e}): the checkpoint is "
                          "damaged") from None
    # the vocab's special tokens (the trainer assumed Google's layout)
    config.pad_token_id = spec.pad_id
    config.cls_token_id = config.bos_token_id = spec.cls_id
    config.sep_token_id = config.eos_token_id = spec.sep_id
    return config


def save(ckpt: Path, config, folder: Path, weights: dict) -> int:
    """Write config.json + model.safetensors into `folder`; returns the parameter count."""
    from transformers import ModernBertForMaskedLM

    from trainer.export import ExportError, state_dict_mismatch

    model = ModernBertForMaskedLM(config)
    problems = state_dict_mismatch(model.state_dict(), weights)
    if problems:
        raise ExportError(f"{ckpt / 'model.pt'} does not fit its ModernBERT config ({problems})")
    model.load_state_dict(weights, strict=False)
    model.tie_weights()
    model.save_pretrained(folder, safe_serialization=True)
    return sum(p.numel() for p in model.parameters())


def write_tokenizer_json(folder: Path) -> None:
    """tokenizer.json of BertTokenizerFast from the folder's vocab.txt + tokenizer_config.json."""
    from transformers import BertTokenizerFast

    BertTokenizerFast.from_pretrained(folder).backend_tokenizer.save(str(folder / "tokenizer.json"))
