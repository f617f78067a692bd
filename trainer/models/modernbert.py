"""The ModernBERT family (`--model_type modernbert`): transformers' ModernBertForMaskedLM behind the
trainer's batch, masked LM only.

    family = FAMILY
    config = family.read_config_file("trainer/configs/modernbert_tiny.json")   # ModernBertConfig
    model = family.build(config, unpad=False, nsp=False)
    out = model(**batch)    # input_ids, input_mask, masked_lm_positions, masked_lm_labels, ...

The network is transformers' own (pre-norm, RoPE, GeGLU, no biases, a final norm, global
attention every `global_attn_every_n_layers` layers and sliding-window attention of
`local_attention` tokens between, decoder tied to the embeddings), so the parameter names are
ModernBertForMaskedLM's and an export is its save_pretrained. Only the forward differs: as for
BERT, the head and the vocab-sized decoder run on the hidden states at the masked slots only
(trainer/models/heads.py). Attention is transformers' SDPA path (on CPU too); there is no
unpadding of its own and no next-sentence head (`nsp_logits` None).

transformers' AutoTokenizer ignores tokenizer_config.json's BertTokenizer for a `modernbert`
config and wants tokenizer.json, so the export writes the fast BERT tokenizer's serialization
too (the same normalizer, word pieces and [CLS] ... [SEP] template).
"""
from __future__ import annotations

from pathlib import Path

from transformers import ModernBertConfig, ModernBertForMaskedLM

from trainer.models.family import CardText, ModelFamily, read_hf_config, save_hf_model, write_tokenizer_json
from trainer.models.heads import masked_lm_loss, masked_slots
from trainer.models.output import PretrainingOutput

REQUIRED_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings")
# Our vocabs' special ids (vocab/training/convert.py: Google's BERT layout); the export writes the vocab's.
TOKEN_IDS = {"pad_token_id": 0, "cls_token_id": 101, "sep_token_id": 102, "bos_token_id": 101,
             "eos_token_id": 102}


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
        seq = self.model(input_ids=input_ids, attention_mask=input_mask.long()).last_hidden_state
        slot_logits = self.decoder(self.head(masked_slots(seq, masked_lm_positions)))
        labels, mlm_loss = masked_lm_loss(slot_logits, masked_lm_labels)
        return PretrainingOutput(loss=mlm_loss, mlm_loss=mlm_loss, nsp_loss=None,
                                 slot_logits=slot_logits, slot_labels=labels, nsp_logits=None)

    def num_parameters(self, *args, **kwargs) -> int:
        return sum(p.numel() for p in self.parameters())


class ModernBertFamily(ModelFamily):
    name = "modernbert"
    display_name = "ModernBERT"
    example_config = "trainer/configs/modernbert_base.json"
    has_nsp = False
    unpads = False   # transformers' ModernBERT has no unpadding of its own
    base_prefix = "model"
    vocab_rows = ("model.embeddings.tok_embeddings.weight", "decoder.weight", "decoder.bias")

    def read_config(self, d: dict, source: str) -> ModernBertConfig:
        config = read_hf_config(ModernBertConfig, d, source, REQUIRED_KEYS, "a ModernBERT config",
                                self.example_config, defaults=TOKEN_IDS)
        config.architectures = ["ModernBertForMaskedLM"]
        config.sparse_prediction = False
        return config

    def special_ids(self, spec) -> dict:
        return {"pad_token_id": spec.pad_id, "cls_token_id": spec.cls_id, "bos_token_id": spec.cls_id,
                "sep_token_id": spec.sep_id, "eos_token_id": spec.sep_id}

    def build(self, config, *, unpad: bool, nsp: bool):
        return ModernBertForPreTraining(config)

    def compile(self, model) -> None:
        model.compile_layers()

    def export(self, weights: dict, config, spec, folder: Path, export_class: str | None = None) -> int:
        """transformers' own save_pretrained (config.json + model.safetensors, the decoder tied to
        the embeddings), the vocab's special ids, and tokenizer.json beside vocab.txt."""
        config = self.with_vocab(config, spec)   # the vocab's special ids (the trainer assumed Google's)
        n_params = save_hf_model(ModernBertForMaskedLM, config, weights, folder, self.display_name)
        write_tokenizer_json(folder, spec)
        return n_params

    def card(self, no_nsp: bool, export_class: str | None = None) -> CardText:
        return CardText("ModernBERT", "ModernBertForMaskedLM", "masked language model only", "")


FAMILY = ModernBertFamily()
