"""A ModernBERT trainer output dir built by hand (vocab, checkpoints/ckpt_*/model.pt +
meta.json with model_type modernbert), for export, fill-mask and held-out MLM tests."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from tests.helpers.trainer_run_dir import write_vocab
from trainer.models import get_family

CONFIG = {"hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 2,
          "intermediate_size": 48, "max_position_embeddings": 64, "global_attn_every_n_layers": 3,
          "local_attention": 16}


def make_modern_run_dir(root: Path, step: int = 10):
    """O/ with one ModernBERT checkpoint at `step`; returns (model, config)."""
    root.mkdir(parents=True, exist_ok=True)
    tokens = write_vocab(root, lower_case=False)
    family = get_family("modernbert")
    config = family.read_config({**CONFIG, "vocab_size": len(tokens)}, "test")
    torch.manual_seed(step)
    model = family.build(config, unpad=False, nsp=False).eval()
    ckpt = root / "checkpoints" / f"ckpt_{step:08d}"
    ckpt.mkdir(parents=True)
    torch.save(model.state_dict(), ckpt / "model.pt")
    (ckpt / "meta.json").write_text(json.dumps(
        {"step": step, "phase": 1, "bert_config": family.config_dict(config), "model_type": "modernbert",
         "world_size": 1, "format_version": 1}))
    return model, config
