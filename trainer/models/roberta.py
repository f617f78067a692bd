"""The RoBERTa and XLM-RoBERTa families (`--model_type roberta`, `--model_type xlm-roberta`):
transformers' RobertaForMaskedLM / XLMRobertaForMaskedLM behind the trainer's batch, masked LM
only. One network, two families: a RoBERTa config.json exports as RobertaForMaskedLM, an XLM-R
one (mmBERT's, Glot500's ...) as XLMRobertaForMaskedLM, so that a model started from XLM-R
comes back as XLM-R.

    family = ROBERTA   # or XLM_ROBERTA
    config = family.with_vocab(family.read_config_file("roberta.json"), spec)   # spec's pad id
    model = family.build(config, unpad=False, nsp=False)
    out = model(**batch)    # input_ids, input_mask, masked_lm_positions, masked_lm_labels, ...

The parameter names are transformers' own, so an export is its save_pretrained. Only the forward
differs: as for BERT, the head and the vocab-sized decoder run on the hidden states at the masked
slots only, the loss in fp32 (trainer/models/heads.py). Attention is transformers' SDPA path,
or, built with `unpad` (packed rows attending within each document, or --unpad), the real tokens
only through trainer/models/hf_varlen.py (FlashAttention's varlen kernel on CUDA). There is no
next-sentence head (the segment ids are not used: a RoBERTa has one token type).

Positions count from the padding id, as fairseq's: the first real token is at position
pad_token_id + 1 (so max_position_embeddings is 514 for 512 tokens with XLM-R's pad id 1).
transformers computes them from `input_ids != pad_token_id`; the trainer's batches say where the
padding is in `input_mask`, so the forward counts them from that (the same positions, whatever id
the data pads with). The config's pad_token_id is the run's tokenizer's (with_vocab); a
vocabulary whose pad id differs from the model's moves the position rows with it (move_rows).
"""
from __future__ import annotations

import logging
from pathlib import Path

import torch
from transformers import RobertaConfig, RobertaForMaskedLM, XLMRobertaConfig, XLMRobertaForMaskedLM

from trainer.models.family import CardText, ModelFamily, read_hf_config, save_hf_model
from trainer.models.heads import masked_lm_loss, masked_slots
from trainer.models.hf_varlen import VARLEN, encode_unpadded, unpadded_config
from trainer.models.layer_compile import compile_by_kind
from trainer.models.output import PretrainingOutput

REQUIRED_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings")
POSITIONS = "roberta.embeddings.position_embeddings.weight"


class _TrainerForward:
    """The trainer's forward over transformers' RoBERTa network (see the module docstring)."""

    def compile_layers(self, **options) -> None:
        """torch.compile the encoder layers in place (one kind: trainer/models/layer_compile.py);
        parameter names do not change."""
        compile_by_kind(self.roberta.encoder.layer, dynamic_from_start=self.config._attn_implementation == VARLEN,
                        **options)

    def forward(self, input_ids, input_mask, masked_lm_positions, masked_lm_labels=None,
                segment_ids=None, next_sentence_labels=None, unpadded=None, doc_starts=None,
                **_unused) -> PretrainingOutput:
        if self.config._attn_implementation == VARLEN:   # built with unpad
            seq = encode_unpadded(self.roberta, input_ids, input_mask, unpadded, doc_starts,
                                  position_offset=self.config.pad_token_id + 1)
        else:
            mask = input_mask.long()
            positions = torch.cumsum(mask, dim=1) * mask + self.config.pad_token_id
            seq = self.roberta(input_ids=input_ids, attention_mask=mask,
                               position_ids=positions).last_hidden_state
        slot_logits = self.lm_head(masked_slots(seq, masked_lm_positions))
        labels, mlm_loss = masked_lm_loss(slot_logits, masked_lm_labels)
        return PretrainingOutput(loss=mlm_loss, mlm_loss=mlm_loss, nsp_loss=None,
                                 slot_logits=slot_logits, slot_labels=labels, nsp_logits=None)

    def num_parameters(self, *args, **kwargs) -> int:
        return sum(p.numel() for p in self.parameters())


class RobertaForPreTraining(_TrainerForward, RobertaForMaskedLM):
    """RobertaForMaskedLM with the trainer's forward."""


class XLMRobertaForPreTraining(_TrainerForward, XLMRobertaForMaskedLM):
    """XLMRobertaForMaskedLM with the trainer's forward."""


class RobertaFamily(ModelFamily):
    has_nsp = False
    unpads = True    # through trainer/models/hf_varlen.py
    base_prefix = "roberta"
    position_table = POSITIONS   # after pad_token_id + 1 reserved rows (position_offset)
    vocab_rows = ("roberta.embeddings.word_embeddings.weight", "lm_head.bias",
                  "lm_head.decoder.weight", "lm_head.decoder.bias")

    def __init__(self, name: str, display_name: str, config_cls, model_cls, hf_cls):
        self.name, self.display_name = name, display_name
        self.config_cls, self.model_cls, self.hf_cls = config_cls, model_cls, hf_cls
        self.example_config = "a transformers config.json of model_type " + name

    def read_config(self, d: dict, source: str):
        config = read_hf_config(self.config_cls, d, source, REQUIRED_KEYS, f"a {self.display_name} config",
                                self.example_config)
        if config.max_position_embeddings <= config.pad_token_id + 1:
            raise ValueError(f"{source}: max_position_embeddings {config.max_position_embeddings} leaves no "
                             f"position after the padding id {config.pad_token_id}")
        config.architectures = [self.hf_cls.__name__]
        return config

    def max_positions(self, config) -> int:
        return config.max_position_embeddings - config.pad_token_id - 1

    def position_offset(self, config) -> int:
        return config.pad_token_id + 1

    def special_ids(self, spec) -> dict:
        return {"pad_token_id": spec.pad_id, "bos_token_id": spec.cls_id, "eos_token_id": spec.sep_id}

    def move_rows(self, state: dict, old_config, new_config) -> dict:
        """Position row pad + 1 + k is the k-th token's: with another padding id, the rows move
        so that every token keeps its position's vector (those past the old range keep theirs)."""
        old, new = old_config.pad_token_id, new_config.pad_token_id
        if old == new or POSITIONS not in state:
            return state
        rows = state[POSITIONS]
        moved = rows.clone()
        n = rows.shape[0] - 1 - max(old, new)
        moved[new + 1:new + 1 + n] = rows[old + 1:old + 1 + n]
        logging.getLogger("trainer").info("%s: the position rows moved with the padding id (%d -> %d): "
                                          "each token keeps its position's vector", self.display_name, old, new)
        return {**state, POSITIONS: moved}

    def build(self, config, *, unpad: bool, nsp: bool):
        if unpad:
            return self.model_cls(unpadded_config(config))
        config._attn_implementation = "sdpa"
        return self.model_cls(config)

    def compile(self, model) -> None:
        model.compile_layers()

    def export(self, weights: dict, config, spec, folder: Path, export_class: str | None = None) -> int:
        """transformers' own save_pretrained with the tokenizer's special ids."""
        new = self.with_vocab(config, spec)   # as trained, unless the run had no vocab then
        return save_hf_model(self.hf_cls, new, self.move_rows(weights, config, new), folder,
                             self.display_name)

    def card(self, no_nsp: bool, export_class: str | None = None) -> CardText:
        return CardText(self.display_name, self.hf_cls.__name__, "masked language model only", "")


ROBERTA = RobertaFamily("roberta", "RoBERTa", RobertaConfig, RobertaForPreTraining, RobertaForMaskedLM)
XLM_ROBERTA = RobertaFamily("xlm-roberta", "XLM-RoBERTa", XLMRobertaConfig, XLMRobertaForPreTraining,
                            XLMRobertaForMaskedLM)
