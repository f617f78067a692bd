"""The BERT pretraining model: config loading, the masked-position gather, equivalence with
Hugging Face's BertForPreTraining (names, outputs, loss), padding, tying, bf16 autocast."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from trainer.models.bert_network import REQUIRED_KEYS, BertConfig, BertForPreTraining

CONFIGS = Path(__file__).resolve().parents[3] / "trainer" / "configs"
TINY = dict(vocab_size=97, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=24, type_vocab_size=2)


def make_model(seed=0, **over):
    torch.manual_seed(seed)
    return BertForPreTraining(BertConfig(**{**TINY, **over}))


def make_batch(seed=0, B=3, L=16, P=4, vocab=97):
    """Rows of different lengths; real predictions first, padding slots have position 0 and
    label -1 (NVIDIA's loader convention)."""
    g = torch.Generator().manual_seed(seed)
    lengths = [L, L - 5, 7][:B]
    input_ids = torch.zeros(B, L, dtype=torch.long)
    input_mask = torch.zeros(B, L, dtype=torch.long)
    segment_ids = torch.zeros(B, L, dtype=torch.long)
    positions = torch.zeros(B, P, dtype=torch.long)
    labels = torch.full((B, P), -1, dtype=torch.long)
    for i, n in enumerate(lengths):
        input_ids[i, :n] = torch.randint(5, vocab, (n,), generator=g)
        input_mask[i, :n] = 1
        segment_ids[i, n // 2:n] = 1
        k = min(P, i + 2)                                   # 2, 3, 4 real predictions
        pos = torch.randperm(n - 2, generator=g)[:k].sort().values + 1
        positions[i, :k] = pos
        labels[i, :k] = torch.randint(5, vocab, (k,), generator=g)
    return dict(input_ids=input_ids, segment_ids=segment_ids, input_mask=input_mask,
                masked_lm_positions=positions, masked_lm_labels=labels,
                next_sentence_labels=torch.tensor([0, 1, 0][:B]))


# -- config ---------------------------------------------------------------------------------

def test_shipped_configs_load():
    sizes = {}
    for name in ("bert_tiny", "bert_base", "bert_large"):
        c = BertConfig.from_json_file(CONFIGS / f"{name}.json")
        sizes[name] = (c.num_hidden_layers, c.hidden_size, c.num_attention_heads,
                       c.intermediate_size)
    assert sizes == {"bert_tiny": (2, 128, 2, 512), "bert_base": (12, 768, 12, 3072),
                     "bert_large": (24, 1024, 16, 4096)}


def test_config_round_trip_and_extra_keys_ignored(tmp_path):
    c = BertConfig(**TINY)
    d = {**c.to_dict(), "architectures": ["BertForPreTraining"], "model_type": "bert"}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(d))
    assert BertConfig.from_json_file(f) == c


@pytest.mark.parametrize("key", ["vocab_size", "num_attention_heads"])
def test_config_missing_key_names_key_and_file(tmp_path, key):
    d = dict(TINY)
    del d[key]
    f = tmp_path / "my_bert.json"
    f.write_text(json.dumps(d))
    with pytest.raises(ValueError) as e:
        BertConfig.from_json_file(f)
    assert key in str(e.value) and "my_bert.json" in str(e.value)
    assert set(REQUIRED_KEYS) >= {key}


@pytest.mark.parametrize("key,value", [("hidden_size", "128"), ("hidden_size", 12.5),
                                       ("num_hidden_layers", True), ("layer_norm_eps", "x"),
                                       ("hidden_act", 3), ("hidden_act", "swish"),
                                       ("num_attention_heads", 5), ("hidden_dropout_prob", 1.5)])
def test_config_bad_value_is_one_clear_error(tmp_path, key, value):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({**TINY, key: value}))
    with pytest.raises(ValueError, match=key.split("_")[0]) as e:
        BertConfig.from_json_file(f)
    assert "bad.json" in str(e.value) and "\n" not in str(e.value)


def test_config_unreadable_file(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        BertConfig.from_json_file(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        BertConfig.from_json_file(tmp_path / "x.json")


# -- forward --------------------------------------------------------------------------------

def test_logits_only_at_real_masked_slots():
    model = make_model().eval()
    batch = make_batch()
    out = model(**batch)
    real = batch["masked_lm_labels"] != -1
    M = int(real.sum())
    assert M == 2 + 3 + 4
    assert out.mlm_logits.shape == (M, 97) and out.nsp_logits.shape == (3, 2)
    assert torch.equal(out.mlm_labels, batch["masked_lm_labels"][real])
    assert torch.allclose(out.loss, out.mlm_loss + out.nsp_loss)
    # without labels: logits at every slot, [B*P, V], no losses
    nolab = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"],
                  batch["masked_lm_positions"])
    assert nolab.loss is None and nolab.mlm_loss is None and nolab.nsp_loss is None
    assert nolab.mlm_logits.shape == (3 * 4, 97)
    torch.testing.assert_close(nolab.mlm_logits[real.reshape(-1)], out.mlm_logits)


def test_padding_tokens_do_not_change_outputs():
    model = make_model().eval()
    batch = make_batch()
    out = model(**batch)
    noisy = dict(batch)
    noisy["input_ids"] = torch.where(batch["input_mask"].bool(), batch["input_ids"],
                                     torch.randint(5, 97, batch["input_ids"].shape))
    out2 = model(**noisy)
    torch.testing.assert_close(out.mlm_logits, out2.mlm_logits)
    torch.testing.assert_close(out.nsp_logits, out2.nsp_logits)


def test_no_masked_tokens_gives_zero_mlm_loss_and_backward_works():
    model = make_model()
    batch = make_batch()
    batch["masked_lm_labels"] = torch.full_like(batch["masked_lm_labels"], -1)
    out = model(**batch)
    assert out.mlm_logits.shape == (0, 97) and out.mlm_loss.item() == 0.0
    out.loss.backward()
    assert model.cls.seq_relationship.weight.grad is not None


def test_dropout_only_in_training():
    model = make_model()
    batch = make_batch()
    model.train()
    a, b = model(**batch).loss, model(**batch).loss
    assert a.item() != b.item()
    model.eval()
    assert model(**batch).loss.item() == model(**batch).loss.item()


def test_init_and_tied_decoder():
    model = make_model(hidden_size=64, intermediate_size=128)
    emb = model.bert.embeddings.word_embeddings.weight
    assert model.cls.predictions.decoder.weight is emb
    assert model.cls.predictions.decoder.bias is model.cls.predictions.bias
    assert abs(emb.std().item() - 0.02) < 0.002
    assert torch.all(model.bert.encoder.layer[0].output.LayerNorm.weight == 1)
    assert torch.all(model.cls.predictions.bias == 0)
    # tied tensors survive a state_dict round trip into a fresh model
    other = make_model(seed=1, hidden_size=64, intermediate_size=128)
    other.load_state_dict(model.state_dict())
    assert other.cls.predictions.decoder.weight is other.bert.embeddings.word_embeddings.weight
    torch.testing.assert_close(other.cls.predictions.decoder.weight, emb)


def test_bf16_autocast_smoke():
    model = make_model(num_hidden_layers=1)
    batch = make_batch(B=2, L=8, P=2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(**batch)
    assert out.mlm_logits.dtype == torch.bfloat16
    assert out.loss.dtype == torch.float32 and torch.isfinite(out.loss)
    out.loss.backward()
    assert model.bert.embeddings.word_embeddings.weight.grad.dtype == torch.float32


# -- equivalence with Hugging Face ----------------------------------------------------------

def _hf_model(model):
    transformers = pytest.importorskip("transformers")
    c = model.config
    hc = transformers.BertConfig(**{k: v for k, v in c.to_dict().items()})
    hf = transformers.BertForPreTraining(hc).eval()
    missing, unexpected = hf.load_state_dict(model.state_dict(), strict=False)
    assert not missing and not unexpected
    return hf


def test_same_parameter_names_and_outputs_as_hugging_face():
    model = make_model().eval()
    hf = _hf_model(model)
    assert set(model.state_dict()) == set(hf.state_dict())
    batch = make_batch()
    out = model(**batch)
    real = batch["masked_lm_labels"] != -1
    full_labels = torch.full_like(batch["input_ids"], -100)
    for i in range(3):
        for p, lab in zip(batch["masked_lm_positions"][i][real[i]],
                          batch["masked_lm_labels"][i][real[i]]):
            full_labels[i, p] = lab
    with torch.no_grad():
        ref = hf(input_ids=batch["input_ids"], attention_mask=batch["input_mask"],
                 token_type_ids=batch["segment_ids"], labels=full_labels,
                 next_sentence_label=batch["next_sentence_labels"])
    rows = torch.arange(3)[:, None].expand_as(real)[real]
    cols = batch["masked_lm_positions"][real]
    torch.testing.assert_close(out.mlm_logits, ref.prediction_logits[rows, cols],
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out.nsp_logits, ref.seq_relationship_logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out.loss, ref.loss, atol=1e-5, rtol=1e-5)
