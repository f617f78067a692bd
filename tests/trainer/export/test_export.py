"""Export round trip: a run dir built by hand per the trainer contract -> Hugging Face folder
that BertForPreTraining / BertTokenizerFast load with the same outputs and vocabulary."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.helpers.hostile_pickle import RunsCode
from tests.helpers.trainer_run_dir import make_run_dir
from trainer.export import export, main

ROOT = Path(__file__).resolve().parents[3]
def test_round_trip_same_outputs_and_tokenizer(tmp_path):
    transformers = pytest.importorskip("transformers")
    models, config = make_run_dir(tmp_path / "run")
    out = tmp_path / "hf"
    assert main(["--checkpoint_dir", str(tmp_path / "run"), "--output", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == {"config.json", "model.safetensors", "vocab.txt",
                                               "tokenizer_config.json", "tokenizer.json", "README.md"}
    assert not list(tmp_path.glob(".tmp_export_*"))

    hf, info = transformers.BertForPreTraining.from_pretrained(out, output_loading_info=True)
    assert all(not v for v in info.values()), info
    hf.eval()
    assert hf.cls.predictions.decoder.weight.data_ptr() == \
        hf.bert.embeddings.word_embeddings.weight.data_ptr()

    ours = models[20]                                          # the newest complete checkpoint
    g = torch.Generator().manual_seed(0)
    B, L = 2, 12
    input_ids = torch.randint(104, config.vocab_size, (B, L), generator=g)
    input_mask = torch.ones(B, L, dtype=torch.long)
    input_mask[1, 8:] = 0
    segment_ids = torch.zeros(B, L, dtype=torch.long)
    segment_ids[:, 5:] = 1
    positions = torch.tensor([[1, 3, 6], [2, 4, 0]])
    labels = torch.tensor([[110, 111, 112], [113, 114, -1]])
    with torch.no_grad():
        a = ours(input_ids, segment_ids, input_mask, positions, labels)
        b = hf(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids)
    rows, cols = torch.tensor([0, 0, 0, 1, 1]), torch.tensor([1, 3, 6, 2, 4])
    torch.testing.assert_close(a.mlm_logits, b.prediction_logits[rows, cols], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(a.nsp_logits, b.seq_relationship_logits, atol=1e-5, rtol=1e-5)

    tok = transformers.BertTokenizerFast.from_pretrained(out)
    vocab = (tmp_path / "run" / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert tok.vocab_size == len(vocab) and tok.convert_ids_to_tokens(104) == vocab[104]
    pieces = tok.tokenize("Budapest Árvíztűrő tükörfúrógép, Hà Nội! Київ.")
    assert pieces == ["Budapest", "Árvíztűrő", "tükör", "##fúró", "##gép", ",", "Hà", "Nội",
                      "!", "Київ", "."]                         # cased, accents kept, no [UNK]
    assert tok.pad_token_id == 0 and tok.mask_token == "[MASK]"


def test_lower_case_vocab_exports_lower_case_tokenizer(tmp_path):
    transformers = pytest.importorskip("transformers")
    make_run_dir(tmp_path / "run", lower_case=True)
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_00000010"
    export(ckpt, tmp_path / "hf")                              # a single ckpt_* dir works too
    cfg = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert cfg["do_lower_case"] is True and cfg["strip_accents"] is False
    tok = transformers.BertTokenizerFast.from_pretrained(tmp_path / "hf")
    assert tok.tokenize("Budapest Árvíztűrő Київ") == ["budapest", "árvíztűrő", "київ"]


def test_export_model_vocab_larger_than_vocab_file(tmp_path):
    """vocab_size rounded up (e.g. to a multiple of 8) beyond vocab.txt still exports."""
    transformers = pytest.importorskip("transformers")
    make_run_dir(tmp_path / "run", lower_case=None, vocab_size=128)
    export(tmp_path / "run", tmp_path / "hf")
    hf = transformers.BertForPreTraining.from_pretrained(tmp_path / "hf")
    assert hf.config.vocab_size == 128
    assert json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())[
        "do_lower_case"] is False                               # no config in the run = cased


def _error_line(capsys, argv):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_bad_input_one_clear_line(tmp_path, capsys):
    out = ["--output", str(tmp_path / "hf")]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no complete checkpoint" in _error_line(capsys, ["--checkpoint_dir", str(empty)] + out)
    assert "not a directory" in _error_line(
        capsys, ["--checkpoint_dir", str(tmp_path / "missing")] + out)

    half = tmp_path / "half"
    (half / "checkpoints" / ".tmp_ckpt_00000005").mkdir(parents=True)
    (half / "checkpoints" / ".tmp_ckpt_00000005" / "model.pt").write_bytes(b"x")
    assert "no complete checkpoint" in _error_line(capsys, ["--checkpoint_dir", str(half)] + out)
    assert "half-written" in _error_line(
        capsys, ["--checkpoint_dir", str(half / "checkpoints" / ".tmp_ckpt_00000005")] + out)

    make_run_dir(tmp_path / "run")
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_00000020"
    (ckpt / "model.pt").write_bytes(b"truncated")
    assert "cannot read" in _error_line(capsys, ["--checkpoint_dir", str(tmp_path / "run")] + out)

    (tmp_path / "run" / "vocab.txt").unlink()
    assert "--vocab_file" in _error_line(capsys, ["--checkpoint_dir", str(tmp_path / "run")] + out)
    small = tmp_path / "small"
    small.mkdir()
    (small / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n" +
                                     "\n".join(f"w{i}" for i in range(200)) + "\n")
    err = _error_line(capsys, ["--checkpoint_dir", str(ckpt.parent / "ckpt_00000010"),
                               "--vocab_file", str(small)] + out)
    assert "205 tokens" in err
    assert not (tmp_path / "hf").exists()                      # nothing half-written


def test_weights_that_do_not_fit_the_config(tmp_path, capsys):
    make_run_dir(tmp_path / "run")
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_00000020"
    meta = json.loads((ckpt / "meta.json").read_text())
    meta["model_config"]["num_hidden_layers"] = 3
    (ckpt / "meta.json").write_text(json.dumps(meta))
    err = _error_line(capsys, ["--checkpoint_dir", str(ckpt), "--output", str(tmp_path / "hf")])
    assert "do not fit the BERT config" in err and "layer.2" in err and len(err) < 300


@pytest.mark.slow
def test_module_entry_point(tmp_path):
    """`python -m trainer.export` runs from the repo root (one subprocess: ~3 s)."""
    make_run_dir(tmp_path / "run")
    r = subprocess.run([sys.executable, "-m", "trainer.export", "--checkpoint_dir",
                        str(tmp_path / "run"), "--output", str(tmp_path / "hf")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "ckpt_00000020" in r.stdout and (tmp_path / "hf" / "model.safetensors").is_file()


def test_runs_written_under_the_old_name_still_export(tmp_path):
    """meta.json's "bert_config" and the run's bert_config.json (the model config's name before
    it was the family's neutral one): the same export."""
    models, config = make_run_dir(tmp_path / "run")
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_00000020"
    meta = json.loads((ckpt / "meta.json").read_text())
    meta["bert_config"] = meta.pop("model_config")
    (ckpt / "meta.json").write_text(json.dumps(meta))
    export(tmp_path / "run", tmp_path / "hf")
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["num_hidden_layers"] == config.num_hidden_layers
    (tmp_path / "run" / "model_config.json").rename(tmp_path / "run" / "bert_config.json")
    (ckpt / "meta.json").write_text(json.dumps({"step": 20, "phase": 1}))
    export(tmp_path / "run", tmp_path / "hf2")
    assert (tmp_path / "hf2" / "config.json").read_bytes() == (tmp_path / "hf" / "config.json").read_bytes()


def test_config_from_run_dir_when_meta_has_none(tmp_path):
    """An older meta.json without the model's config: the run's model_config.json is used."""
    models, config = make_run_dir(tmp_path / "run")
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_00000020"
    (ckpt / "meta.json").write_text(json.dumps({"step": 20, "phase": 1}))
    export(tmp_path / "run", tmp_path / "hf")
    hf_cfg = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert hf_cfg["num_hidden_layers"] == config.num_hidden_layers
    assert hf_cfg["architectures"] == ["BertForPreTraining"] and hf_cfg["model_type"] == "bert"


def test_a_model_file_holding_code_is_refused_not_run(tmp_path, capsys):
    make_run_dir(tmp_path / "run")
    marker = tmp_path / "code_ran"
    ckpt = tmp_path / "run" / "checkpoints" / "ckpt_00000020"
    torch.save({"weights": RunsCode(marker)}, ckpt / "model.pt")
    err = _error_line(capsys, ["--checkpoint_dir", str(ckpt), "--output", str(tmp_path / "hf")])
    assert "refused" in err and not marker.exists()


def test_a_japanese_mecab_vocab_exports_transformers_mecab_tokenizer(tmp_path):
    """A vocab trained on MeCab words (the `mecab` kind, vocab/kinds/mecab.py) keeps its word
    tokenizer in the export: AutoTokenizer loads the folder as BertJapaneseTokenizer on MeCab words."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("fugashi")
    pytest.importorskip("unidic_lite")
    from vocab.kinds.mecab import MecabVocab

    make_run_dir(tmp_path / "run", lower_case=None)
    (tmp_path / "run" / "tokenizer_config.json").write_text(
        json.dumps(MecabVocab.tokenizer_config(False, False)), encoding="utf-8")
    export(tmp_path / "run", tmp_path / "hf")
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    assert type(tok).__name__ == "BertJapaneseTokenizer"
    assert tok.word_tokenizer.__class__.__name__ == "MecabTokenizer"
