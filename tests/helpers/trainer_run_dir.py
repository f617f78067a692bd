"""A trainer output dir built by hand per the trainer's contract (model_config.json, vocab,
checkpoints/ckpt_*/model.pt + meta.json, a half-written .tmp_ckpt_*), for export and fill-mask
tests."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from trainer.models.bert_network import BertConfig, BertForPreTraining

WORDS = ["Budapest", "budapest", "Árvíztűrő", "árvíztűrő", "tükör", "##fúró", "##gép", "a",
         "##k", "Hà", "Nội", "hà", "nội", "Київ", "київ", ",", ".", "!"]


def write_vocab(folder: Path, lower_case: bool | None) -> list[str]:
    tokens = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]",
                                                                 "[MASK]"] + WORDS
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    if lower_case is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(
            {"do_lower_case": lower_case, "strip_accents": False}), encoding="utf-8")
    return tokens


def make_run_dir(root: Path, lower_case: bool | None = False, vocab_size=None):
    """O/ as F's trainer writes it: model_config.json, vocab, checkpoints/ckpt_*/model.pt+meta."""
    root.mkdir(parents=True, exist_ok=True)
    tokens = write_vocab(root, lower_case)
    config = BertConfig(vocab_size=vocab_size or len(tokens), hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=64)
    (root / "model_config.json").write_text(json.dumps(config.to_dict()))
    models = {}
    for step in (10, 20):
        torch.manual_seed(step)
        model = BertForPreTraining(config).eval()
        ckpt = root / "checkpoints" / f"ckpt_{step:08d}"
        ckpt.mkdir(parents=True)
        torch.save(model.state_dict(), ckpt / "model.pt")
        (ckpt / "meta.json").write_text(json.dumps(
            {"step": step, "phase": 1, "model_config": config.to_dict(), "world_size": 1,
             "format_version": 1}))
        models[step] = model
    # a newer, half-written checkpoint: must be ignored
    tmp = root / "checkpoints" / ".tmp_ckpt_00000030"
    tmp.mkdir()
    (tmp / "model.pt").write_bytes(b"partial")
    return models, config
