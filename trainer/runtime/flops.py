"""Model FLOPs of one BERT pretraining step (forward + backward), for MFU.

    from trainer.runtime.flops import train_flops
    f = train_flops(config, lengths=batch["input_mask"].sum(1), num_masked=(labels >= 0).sum())
    mfu = f.total / seconds_per_step / 989e12        # H100 SXM: 989 TFLOP/s dense bf16

The formula (the backward costs twice the forward, so a training step is 3x the forward; a
matrix product is 2 FLOPs per multiply-add):

    dense      6 x matmul weights x the rows they see: every encoder layer (4 H^2 + 2 H I
               weights) at the real, non-padding tokens; the MLM head (transform H^2 and
               decoder H V) at the masked positions only; pooler (H^2) and NSP (2 H) once per
               sequence
    vector     6 x the biases and LayerNorm weights of the same layers x the same rows
               (dense + vector = "6 x non-embedding parameters x tokens")
    attention  per layer and sequence of n real tokens, Q K^T and A V each cost 2 n^2 H
               forward: 12 x layers x H x sum(n^2) for the step

Not counted: embedding lookups, softmax, GELU, dropout, the loss, recomputation (flash
attention's backward) and work on padding. A padded and an unpadded run of one batch are
credited the same FLOPs, so MFU measures useful work.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ParamCounts:
    """Weights (matrices) and vectors (biases, LayerNorm) of the non-embedding layers."""
    layer_weights: int      # one encoder layer
    layer_vectors: int
    mlm_weights: int        # MLM transform + decoder (the decoder is tied to the embeddings)
    mlm_vectors: int
    nsp_weights: int        # pooler + next-sentence classifier
    nsp_vectors: int


def parameter_counts(config) -> ParamCounts:
    """Closed-form counts from a BertConfig (hidden H, intermediate I, vocab V)."""
    H, inter, V = config.hidden_size, config.intermediate_size, config.vocab_size
    return ParamCounts(
        layer_weights=4 * H * H + 2 * H * inter,      # q, k, v, attention output; FFN in and out
        layer_vectors=4 * H + inter + H + 2 * 2 * H,  # their biases; two LayerNorms
        mlm_weights=H * H + H * V,
        mlm_vectors=H + 2 * H + V,                # transform bias, LayerNorm; decoder bias
        nsp_weights=H * H + 2 * H,
        nsp_vectors=H + 2,
    )


@dataclass(frozen=True)
class StepFlops:
    dense: int
    vector: int
    attention: int

    @property
    def total(self) -> int:
        return self.dense + self.vector + self.attention


def train_flops(config, lengths, num_masked: int) -> StepFlops:
    """FLOPs of one forward + backward over sequences of `lengths` real tokens (one entry
    per sequence) with `num_masked` masked positions in all; see the module docstring."""
    n = np.asarray(lengths, dtype=np.int64).reshape(-1)
    tokens, squares, sequences = int(n.sum()), int((n * n).sum()), int(n.size)
    masked = int(num_masked)
    p = parameter_counts(config)
    layers = config.num_hidden_layers
    dense = 6 * (layers * p.layer_weights * tokens + p.mlm_weights * masked
                 + p.nsp_weights * sequences)
    vector = 6 * (layers * p.layer_vectors * tokens + p.mlm_vectors * masked
                  + p.nsp_vectors * sequences)
    attention = 12 * layers * config.hidden_size * squares
    return StepFlops(dense=dense, vector=vector, attention=attention)


def local_pairs(n, window: int):
    """(query, key) pairs of a sequence of n tokens whose keys are at most `window` positions
    away (|q - k| <= window): all n^2 for n <= window + 1, else n^2 less the pairs farther apart
    than the window, (n - window - 1)(n - window). `n` may be an array."""
    n = np.asarray(n, dtype=np.int64)
    far = np.maximum(0, n - window - 1) * np.maximum(0, n - window)
    return n * n - far


def modernbert_train_flops(config, lengths, num_masked: int) -> StepFlops:
    """FLOPs of one ModernBERT forward + backward (transformers' ModernBertConfig keys) over
    segments of `lengths` tokens (the sequences attention runs over: a row, or a document of a
    packed row with --doc_attention within) with `num_masked` masked positions. As for BERT
    (module docstring): 6 x weights x rows, where a layer has Wqkv (3 H^2), Wo (H^2) and GeGLU's
    Wi (2 H I) and Wo (I H), no biases; the head H^2 and the tied decoder H V at the masked
    positions; its vectors are the LayerNorm weights (two a layer, one less in the first; the
    final and the embeddings' norms; the head's) and the decoder's bias. Attention: 12 H per
    (query, key) pair, all pairs of a segment in the global layers (every
    `global_attn_every_n_layers`-th from the first), those within local_attention // 2 in the
    others."""
    n = np.asarray(lengths, dtype=np.int64).reshape(-1)
    tokens, masked = int(n.sum()), int(num_masked)
    H, inter, V = config.hidden_size, config.intermediate_size, config.vocab_size
    layers = config.num_hidden_layers
    types = getattr(config, "layer_types", None)   # transformers 5 (global_attn_every_n_layers
    n_global = (sum(t == "full_attention" for t in types) if types   # is left out when defaulted)
                else len(range(0, layers, config.global_attn_every_n_layers)))
    pairs_global = int((n * n).sum())
    pairs_local = int(local_pairs(n, config.local_attention // 2).sum())
    dense = 6 * (layers * (4 * H * H + 3 * H * inter) * tokens + (H * H + H * V) * masked)
    norms = 2 * layers - 1 + 2          # the layers' (none before the first attention), final, embeddings'
    vector = 6 * (norms * H * tokens + (H + V) * masked)
    attention = 12 * H * (n_global * pairs_global + (layers - n_global) * pairs_local)
    return StepFlops(dense=dense, vector=vector, attention=attention)
