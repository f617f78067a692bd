"""The README.md model card export writes: facts from the run and the pipeline's manifests,
"unknown" where a fact is missing, how to load it, and Wikipedia's CC BY-SA attribution."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.goldens_cli import file_hash  # scripts/goldens.py, run by path
from tests.helpers.synthetic_shards import write_vocab
from trainer.export.card import model_card
from trainer.models import get_family
from trainer.models.bert_network import BertConfig
from vocab.kinds import load_vocab


def write(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")


def small_card(run: Path, ckpt: Path, tmp_path: Path, n_params: int, family: str) -> str:
    """The card of a 200-piece, 2 × 32 model of `family` (its vocab written to tmp_path/vocab)."""
    write_vocab(tmp_path / "vocab", 200)
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64)
    return model_card(run, ckpt, config, load_vocab(tmp_path / "vocab"), n_params=n_params,
                      family=get_family(family))


def test_the_card_holds_the_runs_and_the_corpus_facts(tmp_path):
    hdf5 = tmp_path / "data" / "uk" / "hdf5_lower_case_0_seq_len_128_max_pred_20_x"
    (hdf5 / "ukwiki").mkdir(parents=True)
    write(hdf5 / "manifest.json", {"summary": {"documents": 355, "tokens": 610373,
                                               "training_instances": 27552}})
    write(tmp_path / "data" / "uk" / "download" / "manifest.json",
          {"summary": {"dump": "/dumps/ukwiki-20230501-pages-articles.xml.bz2", "date": "latest"}})
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000400"
    write(run / "hparams.json", {"input_dir": str(hdf5), "max_steps": 400, "phase": 1,
                                 "seq_len": 128, "global_batch_size": 64, "world_size": 2,
                                 "precision": "bf16"})
    write(run / "train_log.jsonl", "".join(json.dumps(r) + "\n" for r in [
        {"step": 400, "loss": 6.5, "mlm_loss": 5.8, "nsp_loss": 0.7},
        {"step": 400, "eval_loss": 6.6, "eval_mlm_loss": 5.9, "eval_mlm_acc": 0.2,
         "eval_nsp_loss": 0.7, "eval_nsp_acc": 0.6, "eval_instances": 3602}]))
    write(ckpt / "meta.json", {"step": 400, "phase": 1})
    card = small_card(run, ckpt, tmp_path, 123456, "bert")
    assert card.startswith("---\nlanguage:\n- uk\n") and "pipeline_tag: fill-mask" in card
    for fact in ("ukwiki-20230501-pages-articles.xml.bz2 (date 2023-05-01)", "355 documents",
                 "610,373 tokens", "27,552 training instances", "200 WordPiece tokens, cased",
                 "123,456 parameters", "400 steps of 400", "bf16", "loss 6.5000 (MLM 5.8000",
                 "on 3,602 held-out instances", "BertForPreTraining.from_pretrained",
                 "https://uk.wikipedia.org", "creativecommons.org/licenses/by-sa/4.0"):
        assert fact in card, fact


def test_missing_facts_are_unknown_not_guessed(tmp_path):
    write_vocab(tmp_path / "vocab", 200)
    ckpt = tmp_path / "ckpt_00000010"
    write(ckpt / "meta.json", {"step": 10, "phase": 1})
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64)
    card = model_card(None, ckpt, config, load_vocab(tmp_path / "vocab"), n_params=1, family=get_family("bert"))
    assert "language:" not in card and "BERT for `unknown`" in card
    assert "unknown (no train_log.jsonl)" in card and "https://www.wikipedia.org" in card


def test_a_run_of_phases_lists_them_as_trained(tmp_path):
    """Each phase's rows, steps as trained (train_log.jsonl's phase starts; a phase the run did not
    reach: as planned), batch, masking, peak and θ; the corpus from the first phase's folder."""
    hdf5 = tmp_path / "data" / "uk" / "hdf5_128"
    (hdf5 / "ukwiki").mkdir(parents=True)
    write(hdf5 / "manifest.json", {"summary": {"documents": 9, "tokens": 1000, "training_instances": 7}})
    plan = [{"phase": i + 1, "input_dir": str(d), "seq_len": n, "train_batch_size": b, "learning_rate": lr,
             "mlm_probability": 0.3, "global_rope_theta": g, "local_rope_theta": 1e4, "first_step": f,
             "last_step": last}
            for i, (d, n, b, lr, g, f, last) in enumerate([(hdf5, 128, 64, 8e-4, 1e4, 1, 60),
                                                          ("d1024", 1024, 8, 8e-4, 1e4, 61, 90),
                                                          ("d8192", 8192, 1, 5e-4, 1.6e5, 91, 100)])]
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000080"
    write(run / "hparams.json", {"input_dir": None, "phase_plan": plan, "max_steps": 100, "phase": 1,
                                 "global_batch_size": 128, "world_size": 2, "precision": "bf16"})
    write(run / "train_log.jsonl", "".join(json.dumps(r) + "\n" for r in [
        {"step": 1, "phase_start": 1, "seq_len": 128}, {"step": 58, "phase_start": 2, "seq_len": 1024},
        {"step": 80, "loss": 3.0, "mlm_loss": 3.0}]))
    write(ckpt / "meta.json", {"step": 80, "phase": 1, "end_step": 95})
    card = small_card(run, ckpt, tmp_path, 1, "modernbert")
    assert "| language | `uk` |" in card and "9 documents, 1,000 tokens" in card
    assert "80 steps of 95, sequence lengths 128 -> 1,024 -> 8,192 in 3 phases" in card
    assert "| 1 | 128 | 1-57 | 64 | 0.3 | 0.0008 | global 10000, local 10000 |" in card
    assert "| 2 | 1,024 | 58-80 | 8 |" in card
    assert "| 3 | 8,192 | 91-100 planned, not reached | 1 | 0.3 | 0.0005 | global 160000, local 10000 |" in card


def test_the_context_evaluation_is_on_the_card(tmp_path):
    from trainer.export.card import context_row

    ev = {"step": 300, "eval_loss": 4.0, "eval_context_acc_long": 0.31, "eval_context_acc_512": 0.29,
          "eval_context_acc_128": 0.25, "eval_context_gain": 0.02, "eval_context_tokens": 21345,
          "eval_context_long_width": 2048}
    row = context_row([{"step": 100, "eval_loss": 5.0}, ev, {"step": 300, "loss": 3.9}])
    assert row.count("\n") == 1 and row.startswith("\n| long context |")
    for fact in ("accuracy 0.310 with the whole segment around them (up to 2,048 tokens)", "0.290 with 512",
                 "0.250 with 128", "context gain +0.020", "21,345 tokens, step 300"):
        assert fact in row, fact
    assert context_row([{"step": 1, "eval_loss": 5.0}]) == ""


def test_what_the_device_did_is_on_the_card_and_the_goldens_blank_it(tmp_path):
    """Each phase's real tokens/s, TFLOP/s, MFU, peak memory and GPU busy share (the phase_*
    figures of its last step record); MFU and GPU busy '-' where the record says null (a CPU)."""
    from trainer.export.card import device_section

    records = [{"step": 1, "phase_start": 1}, {"step": 10, "loss": 3.0, "phase_tokens_per_sec": 391234.4,
                                                  "phase_tflops": 301.2, "phase_mfu": 0.3046,
                                                  "phase_peak_memory_gib": 41.26, "phase_gpu_busy": 96.4},
               {"step": 11, "phase_start": 2},
               {"step": 20, "loss": 2.0, "phase_tokens_per_sec": 1234.0, "phase_tflops": 0.5, "phase_mfu": None,
                "phase_peak_memory_gib": 2.0, "phase_gpu_busy": None}]
    section = device_section(records, {"device": "cuda:0", "precision": "bf16"})
    assert "Trained on `cuda:0` in bf16" in section
    assert "| 1 | 391,234 | 301 | 30.5% | 41.3 | 96% |" in section
    assert "| 2 | 1,234 | 0.5 | - | 2.0 | - |" in section
    assert device_section([{"step": 5, "loss": 1.0}], {}) == ""          # a run logged before
    a, b = tmp_path / "a" / "README.md", tmp_path / "b" / "README.md"
    write(a, "# card\n" + section)
    write(b, "# card\n" + section.replace("391,234", "390,000"))
    assert file_hash(a, tmp_path) == file_hash(b, tmp_path)   # timings: not the product


def test_the_card_has_the_heldout_accuracy_folder_names_and_the_dumps_date(tmp_path):
    """Issue 52: the card lacked the held-out accuracy against the unigram baseline (the report
    had it), its phases table held absolute local paths, and a renamed dump's date was unknown."""
    from trainer.export.card import add_heldout

    data = tmp_path / "data" / "xx"
    hdf5 = data / "hdf5_lower_case_0_seq_len_128_max_pred_40_packed"
    (hdf5 / "xxwiki").mkdir(parents=True)
    write(data / "download" / "manifest.json", {"summary": {"dump": "/home/me/xxwiki.xml.xz"}})
    write(data / "extracted" / "manifest.json", {"summary": {"newest_revision": "2023-05-01T12:08:16Z"}})
    plan = [{"phase": i + 1, "input_dir": str(d), "seq_len": n, "train_batch_size": 8, "learning_rate": 1e-3,
             "mlm_probability": 0.3, "first_step": f, "last_step": last}
            for i, (d, n, f, last) in enumerate([(hdf5, 128, 1, 60), (data / "hdf5_2048", 2048, 61, 94)])]
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000094"
    write(run / "hparams.json", {"phase_plan": plan, "max_steps": 79, "phase": 1})
    write(run / "train_log.jsonl", json.dumps({"step": 94, "eval_loss": 6.0, "eval_mlm_loss": 6.0,
                                               "eval_mlm_acc": 0.1, "eval_instances": 40}) + "\n")
    write(ckpt / "meta.json", {"step": 94, "phase": 1, "end_step": 94})
    write(run / "heldout_mlm.json", {"accuracy": 0.123, "unigram_accuracy": 0.05, "unigram_token": ",",
                                     "tokens": 4321, "step": 94})
    card = small_card(run, ckpt, tmp_path, 1, "modernbert")
    assert "| Wikipedia dump | xxwiki.xml.xz (date 2023-05-01, its newest revision) |" in card
    row = ("| held-out [MASK] accuracy | 0.123 against 0.050 for the unigram baseline (always ','): "
           "2.5x the baseline, every token masked once as [MASK], on 4,321 tokens of held-out rows |")
    assert row in card
    assert str(tmp_path) not in card and "| `hdf5_lower_case_0_seq_len_128_max_pred_40_packed` |" in card
    # make pretrain measures after the export: the row goes into the card written before it
    stale = tmp_path / "README.md"
    stale.write_text(card.replace(row + "\n", ""), encoding="utf-8")
    add_heldout(stale, run, 94)
    assert stale.read_text(encoding="utf-8") == card
    add_heldout(stale, run, 94)   # once, however often
    assert stale.read_text(encoding="utf-8").count("| held-out [MASK] accuracy |") == 1
    # a card of before issue 60 (the row's old name): replaced, not doubled
    stale.write_text(card.replace("| held-out [MASK] accuracy |", "| held-out masked-LM accuracy |"), encoding="utf-8")
    add_heldout(stale, run, 94)
    assert stale.read_text(encoding="utf-8") == card
    add_heldout(stale, run, 200)   # another checkpoint's export: no figure of this one
    assert "| held-out [MASK] accuracy |" not in stale.read_text(encoding="utf-8")
    # issue 60: the trainer's eval is named for what it scores
    assert ("| last evaluation | MLM loss 6.0000 (accuracy 0.100 at the test rows' static masks, 80% [MASK] / "
            "10% random / 10% kept) at step 94") in card
    add_heldout(tmp_path / "no_card" / "README.md", run, 94)   # no card: nothing written, no error
    assert not (tmp_path / "no_card").exists()


def test_a_small_context_gain_keeps_its_sign_on_the_card():
    from trainer.export.card import context_row

    row = context_row([{"step": 94, "eval_loss": 6.0, "eval_context_acc_long": 0.0303,
                        "eval_context_acc_512": 0.03, "eval_context_acc_128": 0.029,
                        "eval_context_gain": 0.0003, "eval_context_tokens": 9000}])
    assert "context gain +0.0003 " in row   # issue 52: it said +0.000, the console +0.0003


def test_the_card_names_a_local_start_by_its_folder_and_a_hub_name_as_it_is(tmp_path):
    """`continued from` showed the trainer machine's absolute path; a Hub name stays whole."""
    from trainer.export.card import source_name

    local = tmp_path / "models" / "hubert-base"
    local.mkdir(parents=True)
    assert source_name(str(local)) == "hubert-base"
    assert source_name("/gone/elsewhere/xlm-roberta-base") == "xlm-roberta-base"
    assert source_name("SZTAKI-HLT/hubert-base-cc") == "SZTAKI-HLT/hubert-base-cc"
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000010"
    write(run / "hparams.json", {"max_steps": 10, "phase": 1, "init_from": str(local)})
    write(ckpt / "meta.json", {"step": 10, "phase": 1})
    card = small_card(run, ckpt, tmp_path, 1, "bert")
    assert "continued from `hubert-base`" in card and str(tmp_path) not in card


def test_the_web_corpora_in_the_data_are_named_with_their_terms(tmp_path):
    from pipeline.stages.ingest import ingest
    from tests.helpers.hub_corpus import fineweb2_repo

    repo = fineweb2_repo(tmp_path / "fineweb-2", {"hun_Latn": [[f"A(z) {i}. oldal szövege."] for i in range(9)]})
    ingest(data_dir=tmp_path / "data", lang="hu", workers=1, corpora=["fineweb-2"], corpus_roots={"": repo})
    hdf5 = tmp_path / "data" / "hu" / "hdf5_lower_case_0_seq_len_128_max_pred_20_x"
    (hdf5 / "huwiki").mkdir(parents=True)
    encoded = {"summary": {"documents": 49, "tokens": 9000, "training_instances": 90},
               "sources": {"wikipedia": {"training_documents": 40}, "fineweb-2": {"training_documents": 9}}}
    write(hdf5 / "manifest.json", encoded)
    run, ckpt = tmp_path / "run", tmp_path / "run" / "checkpoints" / "ckpt_00000010"
    write(run / "hparams.json", {"input_dir": str(hdf5), "max_steps": 10, "phase": 1})
    write(ckpt / "meta.json", {"step": 10, "phase": 1})
    card = small_card(run, ckpt, tmp_path, 1000, "bert")
    assert "datasets:\n- wikipedia\n- HuggingFaceFW/fineweb-2\n---" in card
    assert ("- FineWeb-2 (HuggingFaceFW/fineweb-2, https://huggingface.co/datasets/HuggingFaceFW/fineweb-2), "
            "its `hun_Latn` part at revision `local copy`: ODC-By 1.0") in card
    # data encoded without the web source: the card does not claim it
    write(hdf5 / "manifest.json", {**encoded, "sources": {"wikipedia": {"training_documents": 40}}})
    assert "fineweb-2" not in small_card(run, ckpt, tmp_path, 1000, "bert")
