"""A model family written the way a new one is added (trainer/models/family.py): this one module
and one line in trainer/models/__init__.py's FAMILIES (the test adds the line for its run). A
tiny pre-norm encoder of torch's own layers, masked LM only, exported as safetensors and a
config.json of its own."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from trainer.models.family import CardText, ModelFamily, ModelFileError, require_keys, save_safetensors
from trainer.models.heads import masked_lm_loss, masked_slots
from trainer.models.output import PretrainingOutput

KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings")


@dataclass
class ToyConfig:
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    max_position_embeddings: int

    def to_dict(self) -> dict:
        return asdict(self)


class ToyForMaskedLM(nn.Module):
    def __init__(self, c: ToyConfig):
        super().__init__()
        self.embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.positions = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(
            c.hidden_size, c.num_attention_heads, 2 * c.hidden_size, dropout=0.0, batch_first=True,
            norm_first=True) for _ in range(c.num_hidden_layers))
        self.norm = nn.LayerNorm(c.hidden_size)
        self.decoder_bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, input_ids, input_mask, masked_lm_positions, masked_lm_labels=None,
                **_unused) -> PretrainingOutput:
        L = input_ids.shape[1]
        x = self.embeddings(input_ids) + self.positions.weight[:L]
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=~input_mask.bool())
        hidden = self.norm(masked_slots(x, masked_lm_positions))
        slot_logits = hidden @ self.embeddings.weight.T + self.decoder_bias   # tied decoder
        labels, loss = masked_lm_loss(slot_logits, masked_lm_labels)
        return PretrainingOutput(loss=loss, mlm_loss=loss, nsp_loss=None, slot_logits=slot_logits,
                                 slot_labels=labels, nsp_logits=None)


class ToyFamily(ModelFamily):
    name = "toy"
    display_name = "Toy"
    example_config = "tests/helpers/toy_family.py"
    has_nsp = False
    unpads = False

    def read_config(self, d: dict, source: str) -> ToyConfig:
        require_keys(d, KEYS, source, "a toy config", self.example_config)
        return ToyConfig(**{k: int(d[k]) for k in KEYS})

    def build(self, config, *, unpad: bool, nsp: bool):
        return ToyForMaskedLM(config)

    def compile(self, model) -> None:
        for layer in model.layers:
            layer.compile()

    def export(self, weights: dict, config, spec, folder: Path) -> int:
        model = ToyForMaskedLM(config)
        if set(weights) != set(model.state_dict()):
            raise ModelFileError("the weights do not fit the toy config")
        save_safetensors({k: v.contiguous() for k, v in weights.items()}, folder / "model.safetensors")
        (folder / "config.json").write_text(json.dumps({**config.to_dict(), "architectures": ["ToyForMaskedLM"],
                                                        "pad_token_id": spec.pad_id}), encoding="utf-8")
        return sum(v.numel() for v in weights.values())

    def card(self, no_nsp: bool) -> CardText:
        return CardText("Toy", "ToyForMaskedLM", "masked language model only", "")


FAMILY = ToyFamily()
