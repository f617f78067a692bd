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
(trainer/models/heads.py). Attention is transformers' SDPA path (with its masks: padding and
the local layers' windows) or, built with `unpad` (packed rows attending within each document,
or --unpad), the real tokens only through trainer/models/hf_varlen.py: each document among
itself, the local layers in their window, FlashAttention's varlen kernel on CUDA. There is no
next-sentence head (`nsp_logits` None).

transformers' AutoTokenizer ignores tokenizer_config.json's BertTokenizer for a `modernbert`
config and wants tokenizer.json, so the export writes the fast BERT tokenizer's serialization
too (the same normalizer, word pieces and [CLS] ... [SEP] template).
"""
from __future__ import annotations

import copy
from pathlib import Path

from transformers import ModernBertConfig, ModernBertForMaskedLM
from transformers.masking_utils import create_bidirectional_mask, create_bidirectional_sliding_window_mask
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from trainer.models.family import CardText, ModelFamily, read_hf_config, save_hf_model
from trainer.models.heads import masked_lm_loss, masked_slots
from trainer.models.hf_varlen import VARLEN, encode_unpadded, unpadded_config
from trainer.models.layer_compile import compile_by_kind
from trainer.models.output import PretrainingOutput

REQUIRED_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "intermediate_size", "max_position_embeddings")
# Our vocabs' special ids (vocab/training/convert.py: Google's BERT layout); the export writes the vocab's.
# the θ names a phase sets -> transformers 5's layer types of rope_parameters
ROPE_LAYERS = {"global_rope_theta": "full_attention", "local_rope_theta": "sliding_attention"}
TOKEN_IDS = {"pad_token_id": 0, "cls_token_id": 101, "sep_token_id": 102, "bos_token_id": 101,
             "eos_token_id": 102}
# ModernBertModel takes its masks ready-made as this dict (and then builds none)
NO_MASKS = {"full_attention": None, "sliding_attention": None}


class ModernBertForPreTraining(ModernBertForMaskedLM):
    """ModernBertForMaskedLM with the trainer's forward (see the module docstring); `unpad`: the
    encoder runs on the real tokens only (trainer/models/hf_varlen.py)."""

    def __init__(self, config: ModernBertConfig, unpad: bool = False):
        super().__init__(unpadded_config(config) if unpad else config)
        self.nsp = False
        self.compiled = False

    def compile_layers(self, **options) -> None:
        """torch.compile the encoder layers in place, once per kind (trainer/models/
        layer_compile.py): the first layer (no attention norm), the global ones, the local ones
        (their window a constant of their graph, not a guarded integer); parameter names do not
        change. Unpadded, the token count changes every batch: dynamic from the start."""
        compile_by_kind(self.model.layers, kind=lambda layer: (type(layer.attn_norm), layer.attn.sliding_window),
                        dynamic_from_start=self.config._attn_implementation == VARLEN, **options)
        self.compiled = True

    def forward(self, input_ids, input_mask, masked_lm_positions, masked_lm_labels=None,
                segment_ids=None, next_sentence_labels=None, unpadded=None, doc_starts=None,
                **_unused) -> PretrainingOutput:
        if self.config._attn_implementation == VARLEN:   # built with unpad; masks: none
            seq = encode_unpadded(self.model, input_ids, input_mask, unpadded, doc_starts,
                                  attention_mask=NO_MASKS)
        else:
            masks = self._padded_masks(input_mask) if self.compiled else input_mask.long()
            seq = self.model(input_ids=input_ids, attention_mask=masks).last_hidden_state
        slot_logits = self.decoder(self.head(masked_slots(seq, masked_lm_positions)))
        labels, mlm_loss = masked_lm_loss(slot_logits, masked_lm_labels)
        return PretrainingOutput(loss=mlm_loss, mlm_loss=mlm_loss, nsp_loss=None,
                                 slot_logits=slot_logits, slot_labels=labels, nsp_logits=None)

    def _padded_masks(self, input_mask) -> dict:
        """transformers' masks of padded rows, tensors even where a batch has no padding (it
        builds none then): a compiled layer would otherwise take None for one batch and a tensor
        for the next (a packed shard pads its last row only), and compile each."""
        like = self.model.embeddings.tok_embeddings.weight.new_empty((*input_mask.shape, 0))   # shape, dtype, device
        kwargs = {"config": self.config, "inputs_embeds": like, "attention_mask": input_mask.long(),
                  "allow_is_bidirectional_skip": False}
        return {"full_attention": create_bidirectional_mask(**kwargs),
                "sliding_attention": create_bidirectional_sliding_window_mask(**kwargs)}

    def num_parameters(self, *args, **kwargs) -> int:
        return sum(p.numel() for p in self.parameters())


class ModernBertFamily(ModelFamily):
    name = "modernbert"
    display_name = "ModernBERT"
    example_config = "trainer/configs/modernbert_base.json"
    has_nsp = False
    unpads = True    # through trainer/models/hf_varlen.py
    base_prefix = "model"
    vocab_rows = ("model.embeddings.tok_embeddings.weight", "decoder.weight", "decoder.bias")
    rope_keys = ("global_rope_theta", "local_rope_theta")

    def read_config(self, d: dict, source: str) -> ModernBertConfig:
        config = read_hf_config(ModernBertConfig, d, source, REQUIRED_KEYS, "a ModernBERT config",
                                self.example_config, defaults=TOKEN_IDS)
        config.architectures = ["ModernBertForMaskedLM"]
        config.sparse_prediction = False
        self._old_theta_names(config)
        return config

    def _old_theta_names(self, config) -> None:
        """global_rope_theta / local_rope_theta (the names transformers before 5 reads) kept
        beside rope_parameters, in every config the run writes."""
        for key, theta in self.rope_thetas(config).items():
            setattr(config, key, theta)

    def fit_positions(self, config, seq_len: int):
        """RoPE has no position table: max_position_embeddings is only what the config says, so
        it is raised to the longest rows (one log line)."""
        if seq_len <= config.max_position_embeddings:
            return config, None
        before, config = config.max_position_embeddings, copy.deepcopy(config)
        config.max_position_embeddings = seq_len
        return config, (f"ModernBERT's max_position_embeddings raised from {before} to {seq_len} for "
                        f"rows of {seq_len} tokens (RoPE has no position table to extend)")

    def extend_positions(self, config, n: int):
        raise ValueError(f"--max_position_embeddings {n}: ModernBERT's rotary positions (RoPE) have no "
                         "table to extend: leave it out (max_position_embeddings follows the longest "
                         "rows by itself) and, for long rows, raise the global θ with "
                         "--global_rope_theta (ModernBERT took 160000 for 8,192 tokens) or a phase's "
                         "global_rope_theta")

    def with_rope_thetas(self, config, thetas: dict[str, float]):
        """rope_parameters per layer type (transformers 5) and the old names, set alike."""
        config = copy.deepcopy(config)
        self._put_thetas(config, thetas)
        return config

    def _put_thetas(self, config, thetas: dict[str, float]) -> None:
        for key, theta in thetas.items():
            config.rope_parameters[ROPE_LAYERS[key]]["rope_theta"] = float(theta)
        self._old_theta_names(config)

    def rope_thetas(self, config) -> dict[str, float]:
        return {key: float(config.rope_parameters[layer]["rope_theta"]) for key, layer in ROPE_LAYERS.items()}

    def set_rope_thetas(self, model, thetas: dict[str, float]) -> None:
        """transformers 5's rope_parameters per layer type and the old global_rope_theta /
        local_rope_theta names (which an older transformers reads) set alike, then the rotary
        buffers recomputed in place (they are not in the state dict: a resume sets them again)."""
        config, rotary = model.config, model.model.rotary_emb
        self._put_thetas(config, thetas)
        for layer_type in rotary.layer_types:
            init = (rotary.compute_default_rope_parameters if rotary.rope_type[layer_type] == "default"
                    else ROPE_INIT_FUNCTIONS[rotary.rope_type[layer_type]])
            inv_freq, scaling = init(config, None, layer_type=layer_type)
            for name in (f"{layer_type}_inv_freq", f"{layer_type}_original_inv_freq"):
                getattr(rotary, name).copy_(inv_freq)
            setattr(rotary, f"{layer_type}_attention_scaling", scaling)

    def special_ids(self, spec) -> dict:
        return {"pad_token_id": spec.pad_id, "cls_token_id": spec.cls_id, "bos_token_id": spec.cls_id,
                "sep_token_id": spec.sep_id, "eos_token_id": spec.sep_id}

    def build(self, config, *, unpad: bool, nsp: bool):
        return ModernBertForPreTraining(config, unpad=unpad)

    def compile(self, model) -> None:
        model.compile_layers()

    def export(self, weights: dict, config, spec, folder: Path, export_class: str | None = None) -> int:
        """transformers' own save_pretrained (config.json + model.safetensors, the decoder tied to
        the embeddings) with the vocab's special ids; the tokenizer's files are the export's
        (trainer/export/hf.py, tokenizer.json included)."""
        config = self.with_vocab(config, spec)   # the vocab's special ids (the trainer assumed Google's)
        return save_hf_model(ModernBertForMaskedLM, config, weights, folder, self.display_name)

    def card(self, no_nsp: bool, export_class: str | None = None) -> CardText:
        return CardText("ModernBERT", "ModernBertForMaskedLM", "masked language model only", "")


FAMILY = ModernBertFamily()
