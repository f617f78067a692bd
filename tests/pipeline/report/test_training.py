"""The report's training section (pipeline/report/training.py) for a multilingual run: each
language's share of the samples, its sampling shares at the start and the end of the schedule,
its last held-out evaluation, and its curve."""
from __future__ import annotations

import json

from pipeline.report.training import languages, training_section
from tests.helpers.mlm_run_dir import write_mlm_run


def test_a_multilingual_run_shows_each_language(tmp_path):
    run = tmp_path / "multi"
    run.mkdir()
    lines = [{"step": s, "loss": 7 - s / 10, "mlm_loss": 7 - s / 10, "lr": 1e-3, "grad_norm": 1.0,
              "samples_per_sec": 50.0, "epoch": 0} for s in range(1, 11)]
    for s in (5, 10):
        lines.append({"step": s, "eval_mlm_loss": 6.0, "eval_mlm_acc": 0.2, "eval_loss": 6.0, "eval_instances": 300,
                      "eval_mlm_loss/uk": 6.5, "eval_mlm_acc/uk": 0.15 + s / 100,
                      "eval_mlm_loss/vi": 5.5, "eval_mlm_acc/vi": 0.25 + s / 100})
    (run / "train_log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (run / "hparams.json").write_text(json.dumps({"phase": 1, "max_steps": 10, "languages": {
        "uk": {"sample_share": 0.356, "sampling_shares": [0.456, 0.456]},
        "vi": {"sample_share": 0.644, "sampling_shares": [0.544, 0.544]}}}))
    html = training_section([run]).html()
    assert languages([lines[-1]]) == ["uk", "vi"]
    for text in ("35.6%", "45.6% -&gt; 45.6%", "0.250", "0.350", "Held-out masked-LM accuracy per language"):
        assert text in html or text.replace("&gt;", ">") in html, text


def test_a_long_run_shows_its_context_evaluation(tmp_path):
    run = tmp_path / "long"
    run.mkdir()
    lines = [{"step": s, "loss": 5.0, "mlm_loss": 5.0, "lr": 1e-3, "samples_per_sec": 9.0} for s in (1, 2)]
    lines.append({"step": 2, "eval_loss": 5.1, "eval_mlm_loss": 5.1, "eval_mlm_acc": 0.2, "eval_instances": 40,
                  "eval_context_acc_long": 0.31, "eval_context_acc_512": 0.29, "eval_context_acc_128": 0.25,
                  "eval_context_gain": 0.02, "eval_context_tokens": 21345})
    (run / "train_log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    html = training_section([run]).html()
    for text in ("long context: accuracy whole segment / 512 / 128 tokens", "0.310 / 0.290 / 0.250",
                 "gain +0.020 on 21,345 tokens", "Held-out accuracy deep in long articles"):
        assert text in html, text


def test_a_masked_lm_only_run_has_no_nsp_line_in_its_loss_chart(tmp_path, monkeypatch):
    import pipeline.report.training as training

    run = write_mlm_run(tmp_path / "mlm", 10, 3000, masking="static")
    charts = {}
    monkeypatch.setattr(training, "line_chart", lambda series, title, points=None, **kw:
                        charts.setdefault(title, [*series, *(points or {})]) and "")
    html = training_section([run]).html()
    assert charts["Training loss"] == ["loss", "mlm_loss", "eval mlm_loss"]
    assert "static: the masks in the HDF5 files" in html
    assert "held-out MLM accuracy" not in html   # no heldout_mlm.json: no row


def test_what_the_device_did_is_a_table_a_phase(tmp_path):
    """The phase_* figures of each phase's last step (trainer/runtime/card_use.py): real tokens/s,
    TFLOP/s, MFU, peak memory, GPU busy; '-' where the record says null (MFU on a CPU)."""
    run = tmp_path / "gpu"
    run.mkdir()
    lines = [{"step": 1, "loss": 5.0, "mlm_loss": 5.0, "lr": 1e-3, "samples_per_sec": 9.0},
             {"step": 2, "loss": 5.0, "mlm_loss": 5.0, "lr": 1e-3, "samples_per_sec": 9.0,
              "phase_tokens_per_sec": 231000.0, "phase_tflops": 250.0, "phase_mfu": 0.253,
              "phase_peak_memory_gib": 60.04, "phase_gpu_busy": 97.2},
             {"step": 3, "loss": 4.0, "mlm_loss": 4.0, "lr": 1e-3, "samples_per_sec": 9.0,
              "phase_tokens_per_sec": 812.0, "phase_tflops": 0.01, "phase_mfu": None,
              "phase_peak_memory_gib": 1.5, "phase_gpu_busy": None}]
    (run / "train_log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (run / "hparams.json").write_text(json.dumps({"phase": 1, "device": "cuda:0", "precision": "bf16"}))
    html = training_section([run]).html()
    assert "What the device did" in html and "cuda:0, bf16" in html
    for text in ("231,000", "25.3%", "60.0", "97%", "812"):
        assert text in html, text
    assert "What the device did" not in training_section([tmp_path / "x"]).html()


def test_a_phased_run_shows_its_phases_and_the_end_its_budget_planned(tmp_path):
    """Issue 52: a 94-step run through 128, 512 and 2,048 tokens showed `phase / max_steps 1 / 79`
    and `seq_len / max_pred 128 / 40` (hparams.json's first plan and first phase); its context
    gain of +0.0003 showed as +0.000."""
    run = tmp_path / "long"
    run.mkdir()
    plan = [{"phase": 1, "seq_len": 128, "max_pred": 40, "first_step": 1, "last_step": 55},
            {"phase": 2, "seq_len": 512, "max_pred": 160, "first_step": 56, "last_step": 71},
            {"phase": 3, "seq_len": 2048, "max_pred": 640, "first_step": 72, "last_step": 79}]
    lines = [{"step": 1, "phase_start": 1, "seq_len": 128},
             {"step": 20, "loss": 6.0, "mlm_loss": 6.0, "lr": 1e-3, "samples_per_sec": 30.0},
             {"step": 30, "replan_end": 94, "replan_starts": [0, 66, 85]},
             {"step": 67, "phase_start": 2, "seq_len": 512},
             {"step": 80, "loss": 5.0, "mlm_loss": 5.0, "lr": 1e-3, "samples_per_sec": 8.0},
             {"step": 86, "phase_start": 3, "seq_len": 2048},
             {"step": 94, "eval_loss": 5.1, "eval_mlm_loss": 5.1, "eval_mlm_acc": 0.2, "eval_instances": 40,
              "eval_context_acc_long": 0.0303, "eval_context_acc_512": 0.03, "eval_context_acc_128": 0.029,
              "eval_context_gain": 0.0003, "eval_context_tokens": 9000},
             {"step": 94, "budget_s": 300, "budget_spent_s": 301.0, "budget_replans": 16}]
    (run / "train_log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (run / "hparams.json").write_text(json.dumps({"phase": 1, "max_steps": 79, "seq_len": 128, "max_pred": 40,
                                                  "phase_plan": plan}))
    html = training_section([run]).html()
    for text in ("steps trained / planned", "94 / 94", "128 / 40 (steps 1-66) -&gt; 512 / 160 (67-85) -&gt; "
                 "2,048 / 640 (86-94)", "gain +0.0003 on 9,000 tokens"):
        assert text in html, text
    assert "1 / 79" not in html and "phase / max_steps" not in html


def test_a_model_still_at_word_frequencies_is_flagged_at_the_top(tmp_path):
    """Issue 60: report.html's "What needs a look" did not flag a model at 1.0x the unigram
    baseline; it does, in the verdict's words, with both accuracies named for what they score."""
    from common.heldout_file import HELDOUT, write_heldout
    from pipeline.report.page import render_page

    run = write_mlm_run(tmp_path / "uk_modern", 10, 3000, masking="dynamic")
    measure = {"accuracy": 0.055, "unigram_accuracy": 0.055, "unigram_token": ",", "tokens": 4194, "rows": 34,
               "rows_held_out": 188, "standard_error": 0.004, "ratio_standard_error": 0.1, "max_tokens": 4096}
    write_heldout(run / HELDOUT, measure, run / "hf", tmp_path / "hdf5", "x", step=10)
    sec = training_section([run])
    assert sec.warnings == ["uk_modern: held-out accuracy at [MASK] 1.0x the unigram baseline: it has not "
                            "learned more than word frequencies yet: train longer"]
    page = render_page("wiki2bert report: uk", "data/uk", [sec], lang="uk")
    assert "What needs a look" in page and "1.0x the unigram baseline: it has not learned" in page
    html = sec.html()
    assert "every token masked once as [MASK], on 4,194 tokens of 34 of 188 held-out rows (a seeded sample)" in html
    assert "last eval: mlm loss / acc at the test rows&#x27; static masks, 80% [MASK] / 10% random / 10% kept" in html
    write_heldout(run / HELDOUT, {**measure, "accuracy": 0.2}, run / "hf", tmp_path / "hdf5", "x", step=10)
    assert training_section([run]).warnings == []   # 3.6x: it learned
