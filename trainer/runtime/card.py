"""The micro-batch a GPU takes: the most tokens a rank's forward + backward holds on a card of
a given memory, for a given model, by a rule calibrated on the bench (no torch: the dry run of
`make pretrain` plans for a card that is not present with it).

    tokens = micro_tokens(80, model_config_dict)      # 65,536 for ModernBERT-base on 80 GiB
    rows = card_rows(80, model_config_dict, 8192)     # 8: the micro-batch of 8,192-token rows
    gib = card_memory_gib()                           # this rank's card, in GiB (torch, CUDA)

The rule (tests/trainer/runtime/test_card.py pins it): a training step holds the weights, their
gradients and AdamW's two moments (16 bytes a parameter, fp32) and, for each token of the
micro-batch, activations that grow with hidden size x layers. bench/README.md's
bench_gpu_modern.py measured ModernBERT-base (768 x 22 layers, 149M parameters, bf16,
unpadded, each layer compiled) at a 22.5 GiB peak with 32,768 tokens a micro-batch, whatever the
row length (128, 1,024 or 8,192: the same tokens, the same memory, as attention is FlashAttention's
and the head runs at the masked slots only): (22.5 - 2.2) GiB / 32,768 tokens / (768 x 22) is
about 40 bytes a token per unit of hidden size x layers. The micro-batch is then the largest
power of two of tokens that fits in MARGIN of the card (room for the allocator's fragments,
compile's workspaces and the evaluation), at most MAX_TOKENS: the bench's 32,768 already keeps
an H100 busy (94% in its profile), and twice that halves the per-step overhead again without
straining an 80 GiB card. A card too small for even one row is one `Error:` line.
"""
from __future__ import annotations

BYTES_PER_PARAMETER = 16          # fp32 weights + gradients + AdamW's exp_avg and exp_avg_sq
ACTIVATION_BYTES = 40             # a token, per unit of hidden size x layers (bench-calibrated)
MARGIN = 0.75                     # of the card's memory planned for
MAX_TOKENS = 65_536               # a micro-batch's tokens at most
GIB = 1024 ** 3


class CardError(ValueError):
    """The model does not fit the card at one row; the message says what would."""


def model_shape(model: dict) -> tuple[int, int, int, int]:
    """(hidden size, layers, intermediate size, vocab size) of a model config dict, whatever the
    family calls them (BERT/ModernBERT names, DistilBERT's dim / n_layers / hidden_dim)."""
    hidden = int(model.get("hidden_size") or model.get("dim") or 0)
    layers = int(model.get("num_hidden_layers") or model.get("n_layers") or 0)
    inter = int(model.get("intermediate_size") or model.get("hidden_dim") or 4 * hidden)
    vocab = int(model.get("vocab_size") or 0)
    return hidden, layers, inter, vocab


def parameters(model: dict) -> int:
    """About the model's parameters: per layer attention (4 H^2) and a gated feed-forward
    (3 H I, GeGLU's; an upper bound for BERT's 2 H I), plus the embeddings (V H)."""
    hidden, layers, inter, vocab = model_shape(model)
    return layers * (4 * hidden * hidden + 3 * hidden * inter) + vocab * hidden


def fixed_bytes(model: dict) -> int:
    """What a step holds whatever the micro-batch: weights, gradients, optimizer state."""
    return BYTES_PER_PARAMETER * parameters(model)


def token_bytes(model: dict) -> int:
    """Activation bytes a token of the micro-batch holds through forward + backward."""
    hidden, layers, _, _ = model_shape(model)
    return ACTIVATION_BYTES * hidden * layers


def micro_tokens(memory_gib: float, model: dict) -> int:
    """The micro-batch's tokens on a card of `memory_gib` GiB: the largest power of two that
    fits in MARGIN of it beside the fixed bytes, at most MAX_TOKENS; 0 when nothing fits."""
    room = memory_gib * GIB * MARGIN - fixed_bytes(model)
    fits = int(room // max(1, token_bytes(model)))
    if fits < 1:
        return 0
    return min(MAX_TOKENS, 1 << (fits.bit_length() - 1))


def card_rows(memory_gib: float, model: dict, seq_len: int) -> int:
    """Rows of `seq_len` tokens in a micro-batch on the card; CardError when not even one fits."""
    tokens = micro_tokens(memory_gib, model)
    if tokens < seq_len:
        room = memory_gib * GIB * MARGIN - fixed_bytes(model)
        one_row = (fixed_bytes(model) + seq_len * token_bytes(model)) / MARGIN / GIB
        raise CardError(
            f"a micro-batch of one {seq_len:,}-token row does not fit a card of {memory_gib:g} GiB "
            f"for this model ({fixed_bytes(model) / GIB:.1f} GiB of weights, gradients and "
            f"optimizer state; {max(0, int(room // max(1, token_bytes(model)))):,} tokens fit): "
            f"it needs about {one_row:.0f} GiB; use shorter rows, a smaller model, or a larger card")
    return tokens // seq_len


def card_memory_gib(local_rank: int = 0) -> float:
    """This rank's GPU memory in GiB (CUDA must be present)."""
    import torch  # only on CUDA: the planning above needs none

    return torch.cuda.get_device_properties(local_rank).total_memory / GIB
