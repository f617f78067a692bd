"""--init_from's weights (trainer/models/loading.py, trainer/start/origin.py): a bare encoder (BertModel,
XLMRobertaModel) gets its head initialised and listed, and the encoder's tensors are the folder's
bit for bit; a BERT from a BertModel exports as BertForMaskedLM (meta.json says so); a wiki2bert
run starts another; a transformers config.json is a model JSON (new weights); a torch file that
would run code is refused."""
from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.hostile_pickle import RunsCode
from tests.helpers.pretrained_models import save_model, tokenizer_folder, write_tokenized_shards
from tests.trainer.models.test_families import assert_same_logits, init_args, trainer_model
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def toks(tmp_path_factory):
    root = tmp_path_factory.mktemp("tokenizers")
    return {kind: tokenizer_folder(root, kind) for kind in ("wordpiece", "unigram")}


def built(argv):
    """(config, family, start, model) as the Trainer builds them from `argv`, weights loaded."""
    from trainer.config import load_config
    from trainer.models import get_family
    from trainer.runtime.distributed import init_distributed
    from trainer.start.origin import plan_start
    from trainer.start.parts import build_model

    config = load_config(argv)
    family = get_family(config.model_type)
    start = plan_start(config, family)
    env = init_distributed("cpu")
    return config, family, start, build_model(config, family, start, env, init_weights=True)


@pytest.mark.parametrize("saved, kind, fresh, unused", [
    ("BertModel", "wordpiece",
     "cls.* (3 tensors), cls.predictions.transform.* (4)", "none"),
    ("XLMRobertaModel", "unigram", "lm_head.* (5 tensors)", "roberta.pooler.* (2 tensors)"),
])
def test_a_bare_encoder_gets_its_head_initialised_and_listed(saved, kind, fresh, unused, toks, tmp_path,
                                                             caplog):
    from safetensors.torch import load_file

    model_dir = save_model(tmp_path / "model", saved, toks[kind])
    data = write_tokenized_shards(tmp_path / "data", toks[kind])
    with caplog.at_level("INFO", logger="trainer"):
        _, family, _, model = built(init_args(data, model_dir, tmp_path / "o"))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("init_from")]
    assert len(lines) == 1 and f"initialised fresh: {fresh}; not used: {unused}" in lines[0], lines
    ours = model.state_dict()
    source = load_file(model_dir / "model.safetensors")
    for name, tensor in source.items():
        if not name.startswith("pooler.") or family.name == "bert":
            assert torch.equal(ours[f"{family.base_prefix}.{name}"], tensor), name


def test_a_bert_from_a_bert_model_exports_as_bert_for_masked_lm_and_starts_another_run(toks, tmp_path):
    tok = toks["wordpiece"]
    model_dir = save_model(tmp_path / "model", "BertModel", tok)
    data = write_tokenized_shards(tmp_path / "data", tok)
    run = tmp_path / "run"
    assert main(init_args(data, model_dir, run, max_steps=2, checkpoint_every=2)) == 0
    hp = json.loads((run / "hparams.json").read_text())
    assert hp["no_nsp"] is True and hp["objective"].startswith("masked LM only")
    meta = json.loads((run / "checkpoints" / "ckpt_00000002" / "meta.json").read_text())
    assert meta["export_class"] == "BertForMaskedLM" and meta["model_type"] == "bert"

    from trainer.export import main as export_main

    hf_dir = tmp_path / "hf"
    assert export_main(["--checkpoint_dir", str(run), "--output", str(hf_dir)]) == 0
    assert json.loads((hf_dir / "config.json").read_text())["architectures"] == ["BertForMaskedLM"]
    hf, info = transformers.AutoModelForMaskedLM.from_pretrained(hf_dir, output_loading_info=True)
    assert not any(info.values()), info   # no pooler, no NSP head: nothing unexpected or missing
    assert_same_logits(trainer_model(run, 2), hf.eval(), tok)
    assert "BertForMaskedLM.from_pretrained" in (hf_dir / "README.md").read_text()

    # the run itself is a starting point: its family, export class and tokenizer come with it
    again = tmp_path / "again"
    assert main(init_args(data, run, again, max_steps=2, checkpoint_every=2)) == 0
    meta = json.loads((again / "checkpoints" / "ckpt_00000002" / "meta.json").read_text())
    assert meta["export_class"] == "BertForMaskedLM"
    first = torch.load(run / "checkpoints" / "ckpt_00000002" / "model.pt", weights_only=True)
    _, _, _, model = built(init_args(data, run / "checkpoints" / "ckpt_00000002", tmp_path / "o3"))
    assert all(torch.equal(model.state_dict()[k], v) for k, v in first.items())


def test_a_transformers_config_json_is_a_model_json(toks, tmp_path):
    tok = toks["unigram"]
    model_dir = save_model(tmp_path / "model", "XLMRobertaForMaskedLM", tok)
    data = write_tokenized_shards(tmp_path / "data", tok)
    out = tmp_path / "o"
    argv = init_args(data, model_dir, out, max_steps=1, checkpoint_every=1, vocab_file=tok)
    argv[argv.index("--init_from"):argv.index("--init_from") + 2] = ["--model_config", str(model_dir / "config.json")]
    assert main(argv) == 0
    hp = json.loads((out / "hparams.json").read_text())
    assert hp["model_type"] == "xlm-roberta" and hp["init_from"] is None and hp["no_nsp"] is True


def test_weights_that_would_run_code_are_refused(toks, tmp_path, capsys):
    model_dir = save_model(tmp_path / "model", "XLMRobertaForMaskedLM", toks["unigram"])
    (model_dir / "model.safetensors").unlink()
    marker = tmp_path / "ran"
    torch.save({"roberta.embeddings.word_embeddings.weight": RunsCode(marker)}, model_dir / "pytorch_model.bin")
    data = write_tokenized_shards(tmp_path / "data", toks["unigram"])
    capsys.readouterr()
    assert main(init_args(data, model_dir, tmp_path / "o")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("Error: --init_from") and "could run code" in err[0], err
    assert not marker.exists()
