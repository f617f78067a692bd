"""An export that loads at full length (issue 44): a ModernBERT whose global θ a flag raised and a
BERT whose table --max_position_embeddings extended, each trained a step on rows of 2,048 from a
run at 64, export a config.json that says max_position_embeddings 2048 (and ModernBERT's θ under
transformers 5's rope_parameters and the old names), a tokenizer whose model_max_length is 2048,
and AutoModelForMaskedLM gives the trainer's logits on a 2,048-token input made by AutoTokenizer."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.doc_attention import packed_dir
from tests.helpers.trainer_cli import base_args
from tests.trainer.models.test_families import init_args, trainer_model
from trainer.export.cli import main as export
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
LONG = 2048


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    root = tmp_path_factory.mktemp("rows")
    return {64: packed_dir(root, 64), LONG: packed_dir(root, LONG, docs=12)}


def extended(kind, rows, config, vocab, root):
    """(the run at 2,048 from a run at 64, its export): θ by the flag, or the table extended."""
    short, long = root / "short", root / "long"
    extra = {"model_type": "modernbert"} if kind == "modernbert" else {"no_nsp": True}
    assert main(base_args(rows[64], config, short, vocab=vocab, max_steps=1, checkpoint_every=1,
                          **extra)) == 0
    grow = ({"global_rope_theta": 160000} if kind == "modernbert"
            else {"max_position_embeddings": LONG, "no_nsp": True})
    assert main(init_args(rows[LONG], short, long, max_steps=1, checkpoint_every=1, train_batch_size=2,
                          **grow)) == 0
    assert export(["--checkpoint_dir", str(long), "--output", str(root / "hf")]) == 0
    return long, root / "hf"


@pytest.mark.parametrize("kind", ["modernbert", "bert"])
def test_automodel_reads_2048_tokens_as_the_trainer_does(kind, rows, tiny_bert_config, tiny_vocab,
                                                          tmp_path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    config = tiny_bert_config
    if kind == "modernbert":
        config = tmp_path / "m.json"
        config.write_text(json.dumps({"vocab_size": 200, "hidden_size": 32, "num_hidden_layers": 3,
                                      "num_attention_heads": 2, "intermediate_size": 48,
                                      "max_position_embeddings": 64, "local_attention": 16,
                                      "global_rope_theta": 10000.0, "local_rope_theta": 10000.0}))
    run, hf = extended(kind, rows, config, tiny_vocab, tmp_path)
    saved = json.loads((hf / "config.json").read_text())
    assert saved["max_position_embeddings"] == LONG
    if kind == "modernbert":
        assert saved["rope_parameters"]["full_attention"]["rope_theta"] == 160000.0
        assert saved["rope_parameters"]["sliding_attention"]["rope_theta"] == 10000.0
        assert saved["global_rope_theta"] == 160000.0 and saved["local_rope_theta"] == 10000.0

    tokenizer = AutoTokenizer.from_pretrained(hf)
    assert tokenizer.model_max_length == LONG
    text = " ".join(f"w{(7 * i) % 90}" for i in range(3 * LONG))
    enc = tokenizer(text, truncation=True, return_tensors="pt")
    ids = enc["input_ids"]
    assert ids.shape == (1, LONG) and ids[0, 0] == tokenizer.cls_token_id
    hf_model = AutoModelForMaskedLM.from_pretrained(hf).eval()
    assert hf_model.config.max_position_embeddings == LONG
    ours = trainer_model(run, 1)
    slots = torch.tensor([[1, 100, 700, 1500, 2000, LONG - 2]])
    with torch.no_grad():
        theirs = hf_model(input_ids=ids, attention_mask=enc["attention_mask"]).logits[0, slots[0]]
        mine = ours(input_ids=ids, segment_ids=torch.zeros_like(ids), input_mask=enc["attention_mask"],
                    masked_lm_positions=slots).slot_logits
    assert torch.allclose(theirs, mine, atol=1e-4), (theirs - mine).abs().max()
