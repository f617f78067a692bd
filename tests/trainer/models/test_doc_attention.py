"""Attention within documents (trainer/models/varlen.py, hf_varlen.py, every family built with
`unpad`): a packed batch whose segments attend only to themselves gives, for each masked slot,
the logits (and the batch the loss) of the same segments each put in its own padded row through
the family's padded path; one segment a row gives the padded path's own; ModernBERT's local
layers keep their window inside each document."""
from __future__ import annotations

import copy

import pytest
import torch

from tests.helpers.doc_attention import packed_batch, tiny_config
from tests.helpers.packed_rows import segments_as_rows

pytestmark = pytest.mark.usefixtures("one_thread")
pytest.importorskip("transformers")

L = 64


def models(name: str, **extra):
    """(padded model, unpadded model) of one family with the same weights, in eval mode."""
    family, config = tiny_config(name, 2 * L, dropout=False, **extra)
    torch.manual_seed(0)
    padded = family.build(copy.deepcopy(config), unpad=False, nsp=False).eval()
    unpadded = family.build(copy.deepcopy(config), unpad=True, nsp=False).eval()
    unpadded.load_state_dict(padded.state_dict())
    return padded, unpadded


def assert_differs(other, want, got):
    """`other` is far from `want` next to the rounding between `got` and `want` (ModernBERT's
    small initial weights make every logit small: a fixed threshold would mean little)."""
    rounding = (got - want).abs().max().clamp_min(1e-7)
    assert (other - want).abs().max() > 100 * rounding


def batch_of(within: bool, seed: int = 0):
    """Four packed rows of 64: documents of 3 to 150 tokens (shorter and longer than the window and
    than a row: some continue into the next row), static 15% masks; the loader's batch with its
    layout (a segment a document, or a row)."""
    return packed_batch(L, 4, unpad=True, within=within, seed=seed, lengths=(3, 150))


@pytest.mark.parametrize("name", ["bert", "modernbert", "roberta", "xlm-roberta", "distilbert"])
def test_within_documents_gives_each_document_alone(name):
    padded, unpadded = models(name)
    batch = batch_of(within=True)
    assert batch["unpadded"].segments > len(batch["input_ids"])    # rows really cut at documents
    ref, order = segments_as_rows(batch)
    with torch.no_grad():
        got, want = unpadded(**batch), padded(**ref)
    assert len(order) == got.mlm_labels.numel() == want.mlm_labels.numel()
    torch.testing.assert_close(got.mlm_logits[order], want.mlm_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got.loss, want.loss, rtol=1e-6, atol=1e-6)
    # the padded path on the packed rows (attention across documents) is another model
    with torch.no_grad():
        across = padded(**{k: v for k, v in batch.items() if k != "unpadded"})
    assert_differs(across.mlm_logits[order], want.mlm_logits, got.mlm_logits[order])


@pytest.mark.parametrize("name", ["bert", "modernbert", "roberta", "xlm-roberta", "distilbert"])
def test_across_documents_gives_the_padded_path(name):
    """One segment a row (--doc_attention across with unpadding): today's padded path on the
    packed rows, logits and gradients."""
    padded, unpadded = models(name)
    padded.train(), unpadded.train()   # dropout 0: train mode differs only where a family says so
    batch = batch_of(within=False)
    assert batch["unpadded"].segments == len(batch["input_ids"])
    got, want = unpadded(**batch), padded(**{k: v for k, v in batch.items() if k != "unpadded"})
    torch.testing.assert_close(got.mlm_logits, want.mlm_logits, rtol=1e-5, atol=1e-5)
    got.loss.backward()
    want.loss.backward()
    for (n, p), q in zip(padded.named_parameters(), unpadded.parameters()):
        if p.grad is not None:
            torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6, msg=n)


@pytest.mark.parametrize("block", [None, 4])
def test_modernbert_local_layers_keep_their_window_inside_each_document(block, monkeypatch):
    """Windows of 4 tokens each side (local_attention 8) on documents up to 150 tokens: the band
    is exercised (with blocks of 32, or of 4: many blocks a segment), and it matters: the same
    weights with global attention everywhere give other logits."""
    if block is not None:
        monkeypatch.setattr("trainer.models.grouped_attention.MIN_BLOCK", block)
    padded, unpadded = models("modernbert")
    batch = batch_of(within=True, seed=1)
    ref, order = segments_as_rows(batch)
    with torch.no_grad():
        got, want = unpadded(**batch), padded(**ref)
    torch.testing.assert_close(got.mlm_logits[order], want.mlm_logits, rtol=1e-5, atol=1e-5)
    wide, _ = models("modernbert", local_attention=4 * L)   # every layer sees the whole document
    wide.load_state_dict(padded.state_dict())
    with torch.no_grad():
        unwindowed = wide(**ref)
    assert_differs(unwindowed.mlm_logits, want.mlm_logits, got.mlm_logits[order])


def test_a_model_given_doc_starts_alone_finds_the_documents_itself():
    """Outside the trainer (no layout in the batch) the model finds the segments from the
    batch's doc_starts, one host sync."""
    _, unpadded = models("modernbert")
    batch = batch_of(within=True)
    with torch.no_grad():
        given = unpadded(**batch)
        found = unpadded(**{k: v for k, v in batch.items() if k != "unpadded"})
    torch.testing.assert_close(found.slot_logits, given.slot_logits, rtol=0, atol=0)


def test_an_export_does_not_carry_the_trainer_attention(tmp_path):
    """The unpadded model's attention name lives in the running model only: save_pretrained's
    config.json leaves it out, and a fresh load uses transformers' own default."""
    from transformers import AutoModelForMaskedLM

    from trainer.models.hf_varlen import VARLEN

    _, unpadded = models("modernbert")
    assert unpadded.config._attn_implementation == VARLEN
    unpadded.save_pretrained(tmp_path)
    assert VARLEN not in (tmp_path / "config.json").read_text()
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path)
    assert loaded.config._attn_implementation != VARLEN
