"""--torch_compile (each encoder layer through torch.compile, in place) gives the eager run's
losses, padded and with --unpad, and checkpoints with the same parameter names.

Slow: Inductor compiles the layer's forward and backward to C++ on the CPU (about a minute on a
busy 2-core machine, seconds once torch's compile cache in /tmp is warm)."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.trainer_cli import base_args, read_log
from trainer.run_pretraining import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

# Dropout 0: compiled code draws its dropout masks from another random stream than eager.
NO_DROPOUT = dict(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def test_compiled_runs_give_the_eager_losses(tiny_shards, tmp_path):
    cfg = tmp_path / "bert_nodrop.json"
    cfg.write_text(json.dumps(NO_DROPOUT))
    losses = {}
    for name, flags in {"eager": {}, "compiled": {"torch_compile": True},
                        "compiled_unpadded": {"torch_compile": True, "unpad": True}}.items():
        out = tmp_path / name
        assert main(base_args(tiny_shards, cfg, out, max_steps=4, checkpoint_every=4,
                              **flags)) == 0
        losses[name] = [r["loss"] for r in read_log(out) if "loss" in r]
    assert len(losses["eager"]) == 4
    for name in ("compiled", "compiled_unpadded"):
        # Inductor fuses and reorders float operations: equal to float32 rounding, not bitwise
        assert losses[name] == pytest.approx(losses["eager"], abs=1e-4), name
    ckpt = "checkpoints/ckpt_00000004/model.pt"
    eager = torch.load(tmp_path / "eager" / ckpt, weights_only=True)
    compiled = torch.load(tmp_path / "compiled" / ckpt, weights_only=True)
    assert list(compiled) == list(eager)            # no "_orig_mod." in the names
