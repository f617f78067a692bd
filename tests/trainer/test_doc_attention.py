"""--doc_attention in a run: within documents by default where the packed files mark them
(`encode --pack`'s doc_starts), across with one log line where they do not, `within` asked of
files without the marks one Error line; resolved once, in hparams.json, the loader state and the
model card; a resume cannot change it. End to end: two gloo ranks train a tiny ModernBERT on
packed rows of 256 within documents, and the export, given one document alone, gives the
trainer's logits."""
from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
import torch

from tests.helpers.doc_attention import packed_dir
from tests.helpers.trainer_cli import SCRIPT, base_args, env, read_log
from trainer.run_pretraining import main

pytestmark = pytest.mark.usefixtures("one_thread")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def v2_dir(tmp_path_factory):
    return packed_dir(tmp_path_factory.mktemp("v2"), 64)


@pytest.fixture(scope="module")
def v1_dir(tmp_path_factory):
    return packed_dir(tmp_path_factory.mktemp("v1"), 64, marks=False)


MODERN = dict(model_type="modernbert", learning_rate=1e-3, optimizer="adamw")


def test_within_is_the_default_where_the_files_mark_documents(v2_dir, modern_config, tiny_vocab,
                                                              tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="trainer")
    out = tmp_path / "run"
    assert main(base_args(v2_dir, modern_config, out, vocab=tiny_vocab, max_steps=2, checkpoint_every=2,
                          eval_every=2, **MODERN)) == 0
    assert json.loads((out / "hparams.json").read_text())["doc_attention"] == "within"
    assert any(r.getMessage().startswith("doc_attention within: each document") for r in caplog.records)
    state = torch.load(out / "checkpoints" / "ckpt_00000002" / "trainer_state.pt", weights_only=True)
    assert state["loader"]["doc_attention"] == "within"
    assert any("eval_mlm_loss" in r for r in read_log(out))

    from trainer.export import main as export_main

    assert export_main(["--checkpoint_dir", str(out), "--output", str(tmp_path / "hf")]) == 0
    assert "| attention | within each document" in (tmp_path / "hf" / "README.md").read_text()


def test_files_without_the_marks_attend_across_with_one_line(v1_dir, modern_config, tiny_vocab,
                                                             tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="trainer")
    out = tmp_path / "run"
    assert main(base_args(v1_dir, modern_config, out, vocab=tiny_vocab, max_steps=1, **MODERN)) == 0
    assert json.loads((out / "hparams.json").read_text())["doc_attention"] == "across"
    (line,) = [r.getMessage() for r in caplog.records if "doc_attention" in r.getMessage()]
    assert "do not mark where documents start" in line and "pipeline encode --pack" in line


@pytest.mark.parametrize("data", ["v1", "pairs"])
def test_within_asked_of_files_without_marks_is_one_error_line(data, v1_dir, tiny_shards, modern_config,
                                                               tiny_vocab, tmp_path, capsys):
    folder = v1_dir if data == "v1" else tiny_shards
    out = tmp_path / "run"
    assert main(base_args(folder, modern_config, out, vocab=tiny_vocab, doc_attention="within",
                          **MODERN)) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("Error: --doc_attention within:")
    assert "re-encode with `pipeline encode --pack`" in line and "--doc_attention across" in line
    assert not out.exists()   # nothing written


def test_rows_of_sentence_pairs_keep_their_path(tiny_shards, tiny_bert_config, tmp_path):
    out = tmp_path / "run"
    assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=1)) == 0
    hp = json.loads((out / "hparams.json").read_text())
    assert hp["doc_attention"] is None and hp["unpad"] is False


def test_a_resume_cannot_change_doc_attention(v2_dir, modern_config, tiny_vocab, tmp_path, capsys):
    out = tmp_path / "run"
    kw = dict(vocab=tiny_vocab, max_steps=4, checkpoint_every=2, **MODERN)
    assert main(base_args(v2_dir, modern_config, out, steps_this_run=2, **kw)) == 0
    capsys.readouterr()
    assert main(base_args(v2_dir, modern_config, out, resume_from_checkpoint=True,
                          doc_attention="across", **kw)) == 1
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("Error:")]
    assert "attention changed since the checkpoint" in line and "--doc_attention within" in line
    assert main(base_args(v2_dir, modern_config, out, resume_from_checkpoint=True, **kw)) == 0
    assert [r["step"] for r in read_log(out) if "loss" in r] == [1, 2, 3, 4]


@pytest.mark.slow
def test_two_ranks_train_modernbert_within_documents_and_the_export_reads_a_document_alone(
        modern_config, tiny_vocab, tmp_path):
    data = packed_dir(tmp_path / "data", 256, docs=60)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(SCRIPT), *base_args(data, modern_config, out, vocab=tiny_vocab, max_steps=6,
                                   train_batch_size=2, checkpoint_every=6, eval_every=6, **MODERN)]
    res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    log = [r for r in read_log(out) if "loss" in r]
    assert len(log) == 6 and all(torch.isfinite(torch.tensor(r["loss"])) for r in log)

    from trainer.data import eval_batches, find_shards
    from trainer.export import main as export_main
    from trainer.models.hf_varlen import encode_unpadded
    from trainer.models.modernbert import FAMILY, NO_MASKS

    hf_dir = tmp_path / "hf"
    assert export_main(["--checkpoint_dir", str(out), "--output", str(hf_dir)]) == 0
    hf = transformers.AutoModelForMaskedLM.from_pretrained(hf_dir).eval()
    assert hf.config._attn_implementation in ("sdpa", "eager")   # transformers' own
    ckpt = out / "checkpoints" / "ckpt_00000006"
    meta = json.loads((ckpt / "meta.json").read_text())
    ours = FAMILY.build(FAMILY.read_config(meta["model_config"], "meta.json"), unpad=True, nsp=False)
    ours.load_state_dict(torch.load(ckpt / "model.pt", weights_only=True))
    ours.eval()
    batch = next(eval_batches(find_shards(data).test, 4, 0, 1, unpad=True, within=True))
    info = batch["unpadded"]
    # a whole document: a segment that starts inside a row (at its own [CLS]) and ends at [SEP],
    # longer than the local window
    cu, flat_ids = info.cu_seqlens.tolist(), batch["input_ids"].reshape(-1)[info.indices]
    start, end = next((a, b) for a, b in zip(cu[:-1], cu[1:])
                      if info.indices[a] % 256 and flat_ids[b - 1] == 102 and b - a > 16)
    with torch.no_grad():
        hidden = encode_unpadded(ours.model, batch["input_ids"], batch["input_mask"], info,
                                 attention_mask=NO_MASKS)   # the trainer's encoder, packed rows
        mine = ours.decoder(ours.head(hidden.reshape(-1, hidden.shape[-1])[info.indices[start:end]]))
        alone = flat_ids[start:end][None]
        theirs = hf(input_ids=alone, attention_mask=torch.ones_like(alone)).logits[0]
    torch.testing.assert_close(mine, theirs, atol=1e-4, rtol=1e-4)
