"""ModernBERT (transformers' ModernBertForMaskedLM) behind the trainer's batch, masked LM only.

    from trainer.models.modernbert import load_config, ModernBertForPreTraining
    config = load_config("trainer/configs/modernbert_tiny.json")   # ModernBertConfig
    model = ModernBertForPreTraining(config)
    out = model(**batch)    # input_ids, input_mask, masked_lm_positions, masked_lm_labels, ...

The network is transformers' own (pre-norm, RoPE, GeGLU, no biases, a final norm, global
attention every `global_attn_every_n_layers` layers and sliding-window attention of
`local_attention` tokens between, decoder tied to the embeddings), so the parameter names are
ModernBertForMaskedLM's and an export is its save_pretrained (trainer/models/export_modernbert.py).
Only the forward differs: as for BERT, the head and the vocab-sized decoder run on the hidden
states at the masked slots only, the loss in fp32. Attention is transformers' SDPA path (on CPU
too). There is no next-sentence head: `nsp_logits` are zeros and `nsp_loss` None, which the
trainer's evaluation reads as "MLM only".
"""
from __future__ import annotations

import os

import torch
import torch.nn.functional as F
from transformers import ModernBertConfig, ModernBertForMaskedLM

from trainer.models.bert import read_model_json, require_keys
from trainer.models.output import IGNORE, PretrainingOutput

REQUIRED_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings")
# Our vocabs' special ids (vocab/convert.py: Google's BERT layout); the export writes the vocab's.
TOKEN_IDS = {"pad_token_id": 0, "cls_token_id": 101, "sep_token_id": 102, "bos_token_id": 101,
             "eos_token_id": 102}


def load_config(path: str | os.PathLike) -> ModernBertConfig:
    """A ModernBertConfig from a model JSON (its keys); errors name the file and the key."""
    d = read_model_json(path, "--model_config trainer/configs/modernbert_base.json")
    return config_from_dict(d, source=str(path))


def config_from_dict(d: dict, source: str = "the model config") -> ModernBertConfig:
    require_keys(d, REQUIRED_KEYS, source, "a ModernBERT config",
                 "trainer/configs/modernbert_base.json")
    for k in REQUIRED_KEYS:
        if not isinstance(d[k], int) or isinstance(d[k], bool) or d[k] < 1:
            raise ValueError(f"{source}: {k} must be an integer >= 1, got {d[k]!r}")
    if d["hidden_size"] % d["num_attention_heads"]:
        raise ValueError(f"{source}: hidden_size {d['hidden_size']} is not a multiple of "
                         f"num_attention_heads {d['num_attention_heads']}")
    keys = {k: v for k, v in d.items() if not k.startswith("_")
            and k not in ("architectures", "model_type", "transformers_version")}
    config = ModernBertConfig(**{**TOKEN_IDS, **keys})
    config.architectures = ["ModernBertForMaskedLM"]
    config.sparse_prediction = False
    return config


class ModernBertForPreTraining(ModernBertForMaskedLM):
    """ModernBertForMaskedLM with the trainer's forward (see the module docstring)."""

    def __init__(self, config: ModernBertConfig):
        super().__init__(config)
        self.nsp = False

    def compile_layers(self, **options) -> None:
        """torch.compile each encoder layer in place; parameter names do not change."""
        for layer in self.model.layers:
            layer.compile(**options)

    def forward(self, input_ids, input_mask, masked_lm_positions, masked_lm_labels=None,
                segment_ids=None, next_sentence_labels=None, **_unused) -> PretrainingOutput:
        B, L = input_ids.shape
        seq = self.model(input_ids=input_ids, attention_mask=input_mask.long()).last_hidden_state
        flat_pos = (masked_lm_positions + torch.arange(B, device=seq.device)[:, None] * L).reshape(-1)
        hidden = seq.reshape(B * L, -1).index_select(0, flat_pos)
        slot_logits = self.decoder(self.head(hidden))
        nsp_logits = torch.zeros(B, 2, device=seq.device)
        labels = mlm_loss = None
        if masked_lm_labels is not None:
            labels = masked_lm_labels.reshape(-1)
            labels = torch.where(labels >= 0, labels, IGNORE)
            total = F.cross_entropy(slot_logits.float(), labels, ignore_index=IGNORE, reduction="sum")
            mlm_loss = total / (labels != IGNORE).sum().clamp_min(1)
        return PretrainingOutput(loss=mlm_loss, mlm_loss=mlm_loss, nsp_loss=None,
                                 slot_logits=slot_logits, slot_labels=labels, nsp_logits=nsp_logits)

    def num_parameters(self, *args, **kwargs) -> int:
        return sum(p.numel() for p in self.parameters())
