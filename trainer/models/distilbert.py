"""The DistilBERT family (`--model_type distilbert`): transformers' DistilBertForMaskedLM behind the
trainer's batch, masked LM only (a student's distillation losses are not the trainer's job:
this continues a DistilBERT's masked-LM training, or trains one of its shape from scratch).

    family = FAMILY
    config = family.read_config_file("distilbert/config.json")    # DistilBertConfig (dim, n_layers ...)
    model = family.build(config, unpad=False, nsp=False)
    out = model(**batch)    # input_ids, input_mask, masked_lm_positions, masked_lm_labels, ...

The parameter names are transformers' own, so an export is its save_pretrained. Only the forward
differs: the head (vocab_transform, activation, vocab_layer_norm) and the vocab-sized projector
run on the hidden states at the masked slots only, the loss in fp32 (trainer/models/heads.py).
Attention is transformers' SDPA path, or, built with `unpad` (packed rows attending within each
document, or --unpad), the real tokens only through trainer/models/hf_varlen.py; no
next-sentence head, no token types (the segment ids are not used). Positions are 0..L-1 (with
`unpad`, from each segment's start), whatever the padding.
"""
from __future__ import annotations

from pathlib import Path

from transformers import DistilBertConfig, DistilBertForMaskedLM

from trainer.models.family import CardText, ModelFamily, read_hf_config, save_hf_model
from trainer.models.heads import masked_lm_loss, masked_slots
from trainer.models.hf_varlen import VARLEN, encode_unpadded, unpadded_config
from trainer.models.layer_compile import compile_by_kind
from trainer.models.output import PretrainingOutput

REQUIRED_KEYS = ("vocab_size", "dim", "n_layers", "n_heads", "hidden_dim", "max_position_embeddings")


class DistilBertForPreTraining(DistilBertForMaskedLM):
    """DistilBertForMaskedLM with the trainer's forward (see the module docstring)."""

    def compile_layers(self, **options) -> None:
        """torch.compile the transformer blocks in place (one kind: trainer/models/layer_compile.py);
        parameter names do not change."""
        compile_by_kind(self.distilbert.transformer.layer,
                        dynamic_from_start=self.config._attn_implementation == VARLEN, **options)

    def forward(self, input_ids, input_mask, masked_lm_positions, masked_lm_labels=None,
                segment_ids=None, next_sentence_labels=None, unpadded=None, doc_starts=None,
                **_unused) -> PretrainingOutput:
        if self.config._attn_implementation == VARLEN:   # built with unpad
            seq = encode_unpadded(self.distilbert, input_ids, input_mask, unpadded, doc_starts)
        else:
            seq = self.distilbert(input_ids=input_ids, attention_mask=input_mask.long()).last_hidden_state
        hidden = self.activation(self.vocab_transform(masked_slots(seq, masked_lm_positions)))
        slot_logits = self.vocab_projector(self.vocab_layer_norm(hidden))
        labels, mlm_loss = masked_lm_loss(slot_logits, masked_lm_labels)
        return PretrainingOutput(loss=mlm_loss, mlm_loss=mlm_loss, nsp_loss=None,
                                 slot_logits=slot_logits, slot_labels=labels, nsp_logits=None)

    def num_parameters(self, *args, **kwargs) -> int:
        return sum(p.numel() for p in self.parameters())


class DistilBertFamily(ModelFamily):
    name = "distilbert"
    display_name = "DistilBERT"
    example_config = "a transformers config.json of model_type distilbert"
    has_nsp = False
    unpads = True    # through trainer/models/hf_varlen.py
    base_prefix = "distilbert"
    position_table = "distilbert.embeddings.position_embeddings.weight"
    vocab_rows = ("distilbert.embeddings.word_embeddings.weight", "vocab_projector.weight",
                  "vocab_projector.bias")

    def read_config(self, d: dict, source: str) -> DistilBertConfig:
        config = read_hf_config(DistilBertConfig, d, source, REQUIRED_KEYS, "a DistilBERT config",
                                self.example_config)
        config.architectures = ["DistilBertForMaskedLM"]
        return config

    def special_ids(self, spec) -> dict:
        return {"pad_token_id": spec.pad_id}

    def extend_position_rows(self, state: dict, config) -> tuple[dict, str | None]:
        """Learned rows are copied (the family's rule); a sinusoidal table is not learned: the
        weights' rows are left out, so the model keeps its own, computed for every position."""
        if not getattr(config, "sinusoidal_pos_embds", False):
            return super().extend_position_rows(state, config)
        table = state.get(self.position_table)
        if table is None or table.shape[0] >= config.max_position_embeddings:
            return state, None
        return ({k: v for k, v in state.items() if k != self.position_table},
                f"DistilBERT's sinusoidal position table computed anew for {config.max_position_embeddings:,} "
                "positions (it is not learned)")

    def build(self, config, *, unpad: bool, nsp: bool):
        if unpad:
            return DistilBertForPreTraining(unpadded_config(config))
        config._attn_implementation = "sdpa"
        return DistilBertForPreTraining(config)

    def compile(self, model) -> None:
        model.compile_layers()

    def export(self, weights: dict, config, spec, folder: Path, export_class: str | None = None) -> int:
        """transformers' own save_pretrained with the tokenizer's pad id."""
        return save_hf_model(DistilBertForMaskedLM, self.with_vocab(config, spec), weights, folder,
                             self.display_name)

    def card(self, no_nsp: bool, export_class: str | None = None) -> CardText:
        return CardText("DistilBERT", "DistilBertForMaskedLM", "masked language model only", "")


FAMILY = DistilBertFamily()
