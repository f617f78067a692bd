"""transformers' encoders (ModernBERT, RoBERTa/XLM-R, DistilBERT) on unpadded rows: the real
tokens of a batch as one [1, T] sequence, attention through trainer/models/varlen.py (each
segment, a row or a document of a packed row, among itself; ModernBERT's local layers in their
window), positions from the batch's layout.

    config = unpadded_config(config)             # a copy whose attention is ours (VARLEN)
    seq = encode_unpadded(model.model, input_ids, input_mask, unpadded, doc_starts)   # [B, L, H]

transformers' attention modules call `ALL_ATTENTION_FUNCTIONS[config._attn_implementation]` with
the keyword arguments of the model's forward: ours is registered as VARLEN and takes the layout
from them (`doc_layout`). Its mask function, registered under the same name, builds none (so no
[B, 1, L, L] mask is ever materialised), and ModernBERT is handed its dict of masks ready-made.
The name lives only in the running model's config: save_pretrained does not write it, so an
export loads with transformers' own default.
"""
from __future__ import annotations

import copy

import torch
from transformers import AttentionInterface
from transformers.masking_utils import AttentionMaskInterface

from trainer.data.unpadding import Unpadded, real_tokens
from trainer.models.varlen import pad_rows, varlen_attention

VARLEN = "wiki2bert_varlen"


def varlen_attention_forward(module, query, key, value, attention_mask, dropout: float = 0.0,
                             scaling: float | None = None, sliding_window: int | None = None,
                             doc_layout: Unpadded | None = None, **_kwargs):
    """transformers' attention function signature: q, k, v [1, heads, T, d] -> ([1, T, heads, d],
    no weights). `sliding_window` is what ModernBERT's local layers pass: its config's
    sliding_window (local_attention // 2) + 1, flash's inclusive bound; keys are kept at
    |q - k| <= sliding_window - 1, as transformers' own SDPA mask keeps them."""
    if doc_layout is None:
        raise ValueError(f"attention {VARLEN!r} needs the batch's layout (doc_layout=...): run the "
                         "model through trainer.models.hf_varlen.encode_unpadded")
    window = None if sliding_window is None else sliding_window - 1
    q, k, v = (t[0].transpose(0, 1) for t in (query, key, value))      # [T, heads, d]
    out = varlen_attention(q, k, v, doc_layout, dropout, window=window, scale=scaling)
    return out[None], None


def no_mask(*_args, **_kwargs) -> None:
    """transformers' mask for VARLEN: none (the segments and windows come from the layout)."""
    return None


AttentionInterface.register(VARLEN, varlen_attention_forward)
AttentionMaskInterface.register(VARLEN, no_mask)


def unpadded_config(config):
    """A copy of a transformers config whose attention is VARLEN (the model built from it then
    takes only unpadded rows: encode_unpadded)."""
    config = copy.deepcopy(config)
    config._attn_implementation = VARLEN
    return config


def encode_unpadded(encoder, input_ids, input_mask, unpadded: Unpadded | None,
                    doc_starts: torch.Tensor | None = None, position_offset: int = 0,
                    **extra) -> torch.Tensor:
    """The encoder's last hidden states [B, L, H] (zeros at padding) from the real tokens only.
    `unpadded`: the batch's layout found on the host by the loader; None: found here (one host
    sync), a segment a row or, given `doc_starts`, a segment a document. Token i of a segment is
    at position i + `position_offset` (RoBERTa counts from its padding id + 1)."""
    info = unpadded if unpadded is not None else real_tokens(input_mask, doc_starts)
    ids = input_ids.reshape(-1).index_select(0, info.indices)[None]
    positions = (info.positions + position_offset)[None]
    seq = encoder(input_ids=ids, position_ids=positions, doc_layout=info, **extra).last_hidden_state
    return pad_rows(seq[0], info)
