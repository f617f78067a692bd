"""trainer/runtime/flops.py: the MFU arithmetic against the model's own parameters, a case worked out
by hand, and torch's FLOP counter on a real forward + backward."""
from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from trainer.models.bert_network import BertConfig, BertForPreTraining
from trainer.runtime.flops import local_pairs, modernbert_train_flops, parameter_counts, train_flops

TINY = dict(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64)


def numel(params, ndim):
    return sum(p.numel() for p in params if p.ndim == ndim)


def test_parameter_counts_match_the_model():
    config = BertConfig(**TINY)
    model = BertForPreTraining(config)
    p = parameter_counts(config)
    layer = list(model.bert.encoder.layer[0].parameters())
    assert (p.layer_weights, p.layer_vectors) == (numel(layer, 2), numel(layer, 1))
    head = model.cls.predictions
    transform = list(head.transform.parameters())
    assert p.mlm_weights == numel(transform, 2) + head.decoder.weight.numel()  # tied decoder
    assert p.mlm_vectors == numel(transform, 1) + head.bias.numel()
    nsp = list(model.bert.pooler.parameters()) + list(model.cls.seq_relationship.parameters())
    assert (p.nsp_weights, p.nsp_vectors) == (numel(nsp, 2), numel(nsp, 1))
    # together: every parameter but the embeddings (the decoder's weight is the word embeddings)
    embeddings = sum(t.numel() for t in model.bert.embeddings.parameters())
    total = (config.num_hidden_layers * (p.layer_weights + p.layer_vectors) + p.mlm_weights
             + p.mlm_vectors + p.nsp_weights + p.nsp_vectors)
    assert total == model.num_parameters() - embeddings + head.decoder.weight.numel()


def test_a_case_worked_out_by_hand():
    # H=32, I=64, V=200, 2 layers; sequences of 16 and 10 real tokens, 5 masked in all.
    f = train_flops(BertConfig(**TINY), lengths=[16, 10], num_masked=5)
    layer_w = 4 * 32 * 32 + 2 * 32 * 64                  # 8192
    mlm_w = 32 * 32 + 32 * 200                            # 7424
    nsp_w = 32 * 32 + 2 * 32                              # 1088
    assert f.dense == 6 * (2 * layer_w * 26 + mlm_w * 5 + nsp_w * 2) == 2_791_680
    assert f.vector == 6 * (2 * (9 * 32 + 64) * 26 + (3 * 32 + 200) * 5 + 34 * 2) == 119_112
    assert f.attention == 12 * 2 * 32 * (16 ** 2 + 10 ** 2) == 273_408
    assert f.total == f.dense + f.vector + f.attention
    # lengths may come as a tensor (input_mask.sum(1)); padding costs nothing
    mask = torch.zeros(2, 128, dtype=torch.long)
    mask[0, :16], mask[1, :10] = 1, 1
    assert train_flops(BertConfig(**TINY), mask.sum(1), torch.tensor(5)) == f


def batch(lengths, seq_len=16, num_pred=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    B = len(lengths)
    ids = torch.zeros(B, seq_len, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(104, 200, (n,), generator=g)
        mask[i, :n] = 1
    positions = torch.arange(1, num_pred + 1).repeat(B, 1)
    labels = torch.randint(104, 200, (B, num_pred), generator=g)
    return dict(input_ids=ids, segment_ids=torch.zeros_like(ids), input_mask=mask,
                masked_lm_positions=positions, masked_lm_labels=labels,
                next_sentence_labels=torch.zeros(B, dtype=torch.long))


def counted(model, b):
    """torch's count of one forward + backward: matrix products only."""
    counter = FlopCounterMode(display=False)
    with counter:
        model(**b).loss.backward()
    return {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}


def test_torch_flop_counter_agrees_on_full_length_sequences():
    """The counter sees matrix products (no biases or LayerNorm): dense + attention, exactly."""
    config = BertConfig(**TINY)
    b = batch([16, 16, 16])
    f = train_flops(config, b["input_mask"].sum(1), num_masked=9)
    assert sum(counted(BertForPreTraining(config), b).values()) == f.dense + f.attention


@pytest.mark.parametrize("unpad", [False, True])
def test_unpadding_removes_the_padding_work_from_the_dense_layers(unpad):
    config = BertConfig(**TINY)
    b = batch([16, 7, 3])
    f = train_flops(config, b["input_mask"].sum(1), num_masked=9)
    ops = counted(BertForPreTraining(config, unpad=unpad), b)
    dense = ops["aten.mm"] + ops["aten.addmm"]
    if unpad:
        assert dense == f.dense                     # the encoder saw the 26 real tokens only
    else:                                           # padded: 48 token rows through the encoder
        padded = train_flops(config, [16, 16, 16], num_masked=9)
        assert dense == padded.dense > f.dense


def test_local_pairs_counts_the_band():
    for n in (1, 3, 5, 9, 40):
        for w in (0, 2, 4, 64):
            brute = sum(1 for q in range(n) for k in range(n) if abs(q - k) <= w)
            assert int(local_pairs(n, w)) == brute


def test_modernbert_flops_against_torch_counter():
    """A tiny ModernBERT on full rows, its windows wider than the rows, attention in eager matrix
    products (torch's counter credits every pair whatever the mask): dense + attention exactly."""
    from trainer.models import get_family

    family = get_family("modernbert")
    config = family.read_config(dict(vocab_size=200, hidden_size=32, num_hidden_layers=3,
                                     num_attention_heads=2, intermediate_size=48,
                                     max_position_embeddings=64, local_attention=64,
                                     global_attn_every_n_layers=3), "tiny")
    torch.manual_seed(0)
    b = batch([16, 16, 16])
    f = modernbert_train_flops(config, b["input_mask"].sum(1), num_masked=9)
    config._attn_implementation = "eager"   # attention as matrix products the counter sees
    assert sum(counted(family.build(config, unpad=False, nsp=False), b).values()) == f.dense + f.attention
    # within a window of 2 (local_attention 4) the local layers see only 5 keys a query
    narrow = modernbert_train_flops(family.read_config({**config.to_dict(), "local_attention": 4}, "t"),
                                    [16], 0)
    assert narrow.attention == 12 * 32 * (16 * 16 + 2 * (16 * 5 - 2 * 3))
