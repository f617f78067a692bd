"""Every family from a transformers folder (--init_from): a tiny model of its class, built and saved
here with its own tokenizer (WordPiece for BERT and DistilBERT, byte-level BPE for RoBERTa and
ModernBERT, Unigram for XLM-R, which pads with 1), data encoded with that tokenizer, a few
training steps, export as transformers' own class, and `AutoModelForMaskedLM.from_pretrained`
of the export gives the trainer's logits; AutoTokenizer of the export gives the tokenizer's ids.
A RoBERTa run resumes exactly."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.pretrained_models import MODELS, sample_batch, save_model, tokenizer_folder, write_tokenized_shards
from tests.helpers.trainer_cli import assert_same_run, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
transformers = pytest.importorskip("transformers")

CASES = [   # (the class saved, its family, the class it exports as)
    ("BertForPreTraining", "bert", "BertForPreTraining"),
    ("ModernBertForMaskedLM", "modernbert", "ModernBertForMaskedLM"),
    ("RobertaForMaskedLM", "roberta", "RobertaForMaskedLM"),
    ("XLMRobertaForMaskedLM", "xlm-roberta", "XLMRobertaForMaskedLM"),
    ("DistilBertForMaskedLM", "distilbert", "DistilBertForMaskedLM"),
]


@pytest.fixture(scope="module")
def tokenizers_root(tmp_path_factory):
    return tmp_path_factory.mktemp("tokenizers")


def init_args(data, init_from, out, **kw):
    """A tiny fp32 CPU run from --init_from (the model's own tokenizer: no --vocab_file)."""
    opts = {"init_from": init_from, "input_dir": data, "output_dir": out, "train_batch_size": 8,
            "max_steps": 3, "log_every": 1, "checkpoint_every": 3, "learning_rate": 1e-3,
            "optimizer": "adamw", "warmup_proportion": 0.0, "seed": 3, "device": "cpu", **kw}
    argv = ["--no-tensorboard"]
    for k, v in opts.items():
        argv += [f"--{k}"] if v is True else [f"--{k}", str(v)]
    return argv


def trainer_model(run, step):
    """The run's model at `step`, as the trainer builds it, with the checkpoint's weights."""
    from trainer.models import get_family

    ckpt = run / "checkpoints" / f"ckpt_{step:08d}"
    meta = json.loads((ckpt / "meta.json").read_text())
    family = get_family(meta["model_type"])
    model = family.build(family.read_config(meta["model_config"], "meta.json"), unpad=False, nsp=False)
    model.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True))
    return model.eval()


def assert_same_logits(ours, hf, tok):
    ids, mask = sample_batch(tok)
    positions = torch.tensor([[1, 5, 9, 12]] * ids.shape[0])
    with torch.no_grad():
        mine = ours(input_ids=ids, input_mask=mask, segment_ids=torch.zeros_like(ids),
                    masked_lm_positions=positions).slot_logits
        theirs = hf(input_ids=ids, attention_mask=mask).logits
    expected = torch.stack([theirs[b, positions[b]] for b in range(ids.shape[0])]).reshape(mine.shape)
    torch.testing.assert_close(mine, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("saved, family, exported", CASES, ids=[c[1] for c in CASES])
def test_a_transformers_model_trains_and_exports_as_its_own_class(saved, family, exported, tokenizers_root,
                                                                  tmp_path, caplog):
    tok = tokenizer_folder(tokenizers_root, MODELS[saved][0])
    model_dir = save_model(tmp_path / "model", saved, tok)
    data = write_tokenized_shards(tmp_path / "data", tok)
    run = tmp_path / "run"
    with caplog.at_level("INFO", logger="trainer"):
        assert main(init_args(data, model_dir, run, masking="dynamic")) == 0
    hp = json.loads((run / "hparams.json").read_text())
    assert hp["model_type"] == family and hp["init_from"] == str(model_dir)
    assert hp["vocab_file"] == str(model_dir) and hp["no_nsp"] is (family != "bert")
    loaded = [r.getMessage() for r in caplog.records if r.getMessage().startswith("init_from")]
    assert len(loaded) == 1 and "initialised fresh: none; not used: none" in loaded[0], loaded
    train = [r for r in read_log(run) if "loss" in r]
    assert len(train) == 3 and all(r["loss"] == r["loss"] for r in train)

    from trainer.export import main as export_main

    hf_dir = tmp_path / "hf"
    assert export_main(["--checkpoint_dir", str(run), "--output", str(hf_dir)]) == 0
    assert json.loads((hf_dir / "config.json").read_text())["architectures"] == [exported]
    hf = transformers.AutoModelForMaskedLM.from_pretrained(hf_dir).eval()
    assert_same_logits(trainer_model(run, 3), hf, tok)
    text = "Київ Straße café árvíztűrő 1999."
    theirs = transformers.AutoTokenizer.from_pretrained(hf_dir)(text)["input_ids"]
    assert theirs == transformers.AutoTokenizer.from_pretrained(tok)(text)["input_ids"]


def test_a_roberta_run_from_a_folder_resumes_exactly(tokenizers_root, tmp_path):
    tok = tokenizer_folder(tokenizers_root, "bpe")
    model_dir = save_model(tmp_path / "model", "RobertaForMaskedLM", tok)
    data = write_tokenized_shards(tmp_path / "data", tok)
    kw = dict(max_steps=4, checkpoint_every=2)
    straight, parts = tmp_path / "straight", tmp_path / "parts"
    assert main(init_args(data, model_dir, straight, **kw)) == 0
    assert main(init_args(data, model_dir, parts, steps_this_run=2, **kw)) == 0
    assert main(init_args(data, model_dir, parts, resume_from_checkpoint=True, **kw)) == 0
    assert_same_run(straight, parts, 4)
