"""`pipeline report`: one self-contained page with a section per part (stable ids), pictures
inline, red warnings where a stage lost an unusual share, rendered in a real headless Chromium;
`pipeline run` ends by writing it."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.report.funnel import funnel_section
from pipeline.report.inputs import ReportInputs
from pipeline.report.page import SECTION_IDS
from tests.helpers.browser import probe_page
from tests.helpers.downstream_results import write_results
from tests.helpers.mlm_run_dir import write_mlm_run

IMG = re.compile(r'<img alt="([^"]*)" src="([^"]*)"')


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory, sample_dump):
    """`pipeline run` on the shipped sample (small settings) and what it printed."""
    data = tmp_path_factory.mktemp("data")
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "--workers", "1", "run",
                                   "--dump", str(sample_dump), "--vocab-size", "600",
                                   "--dupe-factor", "1", "--encode", "128/20"])
    assert res.exit_code == 0, res.output
    return data, res.output


def write_train_run(folder: Path, steps: int = 40) -> Path:
    """A trainer output dir as trainer/runtime/logs.py writes it (train_log.jsonl, hparams.json)."""
    folder.mkdir(parents=True)
    lines = []
    for s in range(1, steps + 1):
        lines.append({"step": s, "loss": 9 - s / 10, "mlm_loss": 8.3 - s / 10, "nsp_loss": 0.7,
                      "lr": 1e-3 * min(1, s / 4), "grad_norm": 1.0, "samples_per_sec": 100 + s,
                      "epoch": 0})
        if s % 20 == 0:
            lines.append({"step": s, "eval_mlm_loss": 8 - s / 10, "eval_mlm_acc": 0.1,
                          "eval_nsp_loss": 0.69, "eval_nsp_acc": 0.55, "eval_loss": 8.7 - s / 10,
                          "eval_instances": 148})
    (folder / "train_log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (folder / "hparams.json").write_text(json.dumps({"phase": 1, "max_steps": steps, "world_size": 2,
                                                     "global_batch_size": 32, "seq_len": 128}))
    return folder


@pytest.fixture(scope="module")
def report_with_runs(sample_run, tmp_path_factory):
    """`pipeline report --run GOOD --run EMPTY --downstream BAD --output r.html` on the sample
    run, GOOD with its fine-tuning results in downstream/: (page, EMPTY)."""
    data, _ = sample_run
    tmp = tmp_path_factory.mktemp("report")
    run = write_train_run(tmp / "p1")
    write_results(run / "downstream")
    (tmp / "empty").mkdir()
    (tmp / "bad.json").write_text('{"task": "ner", "metric": "entity_f1"}')
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--run", str(run),
                                   "--run", str(tmp / "empty"), "--downstream", str(tmp / "bad.json"),
                                   "--output", str(tmp / "r.html")])
    assert res.exit_code == 0, res.output
    return tmp / "r.html", tmp / "empty"


def sections(page: str) -> dict[str, str]:
    parts = re.split(r'<section id="', page)[1:]
    return {p.split('"', 1)[0]: p for p in parts}


def test_run_ends_by_writing_the_report_and_printing_its_path(sample_run):
    data, output = sample_run
    page = data / "hu" / "report.html"
    assert page.is_file() and f"report: {page}" in output
    assert output.index("encode:") < output.index(f"report: {page}")


def test_the_page_is_self_contained_with_every_section_and_its_pictures(sample_run):
    data, _ = sample_run
    page = (data / "hu" / "report.html").read_text(encoding="utf-8")
    found = sections(page)
    assert list(found) == list(SECTION_IDS)
    for sid in ("funnel", "rejections", "quality", "vocab", "hdf5"):
        assert IMG.search(found[sid]), f"section {sid} has no picture"
    for _alt, src in IMG.findall(page):
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not re.search(r'(src|href)="(https?:)?//', page)        # nothing from the network
    # corpus text is in the HTML, marked with the language (the browser picks its font)
    assert 'lang="hu"' in found["hdf5"] and "[MASK→" in found["hdf5"]
    assert "real (non-pad) tokens" in found["hdf5"]
    # the demo sample holds out a few articles only: the page says the eval would mean little
    assert "under 1,000" in found["vocab"] and "--min-test-sentences" in found["hdf5"]


def test_the_real_token_share_is_a_share_of_all_files_not_a_sum(sample_run):
    """Issue 38: the page said 1482.7% (the files' shares added up) where inspect says 86%."""
    import h5py

    data, _ = sample_run
    hdf5 = sections((data / "hu" / "report.html").read_text(encoding="utf-8"))["hdf5"]
    shown = float(re.search(r"real \(non-pad\) tokens</td><td[^>]*>([\d.]+)%", hdf5).group(1))
    real = slots = 0
    files = sorted((data / "hu").glob("hdf5_*/huwiki/*.hdf5"))
    assert len(files) > 1
    for f in files:
        with h5py.File(f, "r") as fh:
            real += int(fh["input_mask"][:].sum())
            slots += fh["input_mask"].size
    assert shown == pytest.approx(100 * real / slots, abs=0.05)


def test_the_sample_does_not_repeat_its_sentences(sample_run):
    """The shipped sample's articles share sections but not sentences (data/sample/README.md):
    the filter's repeated-line rule drops next to nothing and the page opens with no red line
    about lost text."""
    data, _ = sample_run
    split = json.loads((data / "hu" / "sentences" / "manifest.json").read_text())["summary"]
    flt = json.loads((data / "hu" / "filtered" / "manifest.json").read_text())["summary"]
    assert flt["repeated_lines"] <= 0.01 * split["sentences"]
    assert flt["output_bytes"] >= 0.97 * flt["input_bytes"]
    page = (data / "hu" / "report.html").read_text(encoding="utf-8")
    assert 'class="warn"' not in sections(page)["funnel"]


def test_runs_add_their_curves_and_bad_runs_are_named(sample_run, report_with_runs, tmp_path):
    data, _ = sample_run
    page, empty = report_with_runs
    training = sections(page.read_text(encoding="utf-8"))["training"]
    assert len(IMG.findall(training)) == 3          # loss with eval points, lr, samples/s
    assert "eval on only 148 held-out instances" in training
    assert "no train_log.jsonl" in training and str(empty) in training
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--run",
                                   str(tmp_path / "nowhere")])
    assert res.exit_code == 1 and "--run" in res.output and "Traceback" not in res.output


def test_a_runs_fine_tuning_results_and_a_broken_one_given_by_hand(sample_run, report_with_runs, tmp_path):
    data, _ = sample_run
    page, _ = report_with_runs
    text = page.read_text(encoding="utf-8")
    downstream = sections(text)["downstream"]
    assert [alt for alt, _ in IMG.findall(downstream)] == [
        "ner: entity_f1 after fine-tuning, against pretraining step"]
    assert "<td class=num>0.610 ± 0.012</td>" in downstream and "random init" in downstream
    # the broken file is a red line in the section and at the top, not a crash
    assert "bad.json: not a fine-tuning results.json: &#x27;pretrained&#x27; is missing" in downstream
    top = text[text.index('id="warnings"'):text.index("<section")]
    assert 'href="#downstream"' in top and "bad.json" in top
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--downstream",
                                   str(tmp_path / "nowhere.json")])
    assert res.exit_code == 1 and "--downstream" in res.output and "does not exist" in res.output
    assert "Traceback" not in res.output


def test_a_stage_that_lost_an_unusual_share_is_red(tmp_path):
    data = ReportInputs(tmp_path)
    data.manifests = {
        "split": {"summary": {"documents": 1000, "sentences": 9000, "output_bytes": 10**6,
                              "input_bytes": 10**6}, "seconds": 1.0},
        "filter": {"summary": {"documents": 1000, "kept": 280, "rejected": 720,
                               "sentences": 3000, "output_bytes": 3 * 10**5}, "seconds": 2.0},
    }
    sec = funnel_section(data)
    assert sec.warnings == ["filter: 72.0% of the documents were rejected (more than 30% is unusual)"]
    html = sec.html()
    assert 'class="warn"' in html and '<tr class=bad><td>filter</td>' in html
    data.manifests["filter"]["summary"].update(kept=900, rejected=100)
    assert funnel_section(data).warnings == []
    # documents kept, but most of their text dropped (repeated lines): red too
    data.manifests["filter"]["summary"].update(input_bytes=10**6, output_bytes=4 * 10**5)
    assert funnel_section(data).warnings[0].startswith("filter: 60.0% of the text bytes")


def test_no_data_yet_is_one_line(tmp_path):
    res = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "uk", "report"])
    assert res.exit_code == 1 and "does not exist" in res.output and "pipeline --lang uk run" in res.output


@pytest.mark.slow
def test_chromium_loads_every_image_and_finds_every_section(report_with_runs, tmp_path):
    page, _ = report_with_runs
    found = probe_page(page, tmp_path)
    assert found["sections"] == list(SECTION_IDS)
    assert found["images"] == len(IMG.findall(page.read_text(encoding="utf-8"))) >= 8
    assert found["broken"] == []
    # the probe does notice a picture that does not load
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img alt="x" src="data:image/png;base64,AAAA"></body></html>')
    assert probe_page(bad, tmp_path)["broken"] == ["x"]


def test_a_masked_lm_only_run_shows_what_it_did_and_its_held_out_accuracy(sample_run, tmp_path):
    """Issue 46: make pretrain's headline (held-out accuracy against the unigram baseline) is on
    the page, and the HDF5 table says the run masked anew (100% [MASK]), not the files' 80/10/10."""
    data, _ = sample_run
    (hdf5,) = [p for p in (data / "hu").iterdir() if p.name.startswith("hdf5_")]
    run = write_mlm_run(tmp_path / "hu_modern", 20, 148, objective="mlm", input_dir=str(hdf5),
                        masking="dynamic", mlm_probability=0.3, mask_replace_prob=1.0,
                        random_replace_prob=0.0)
    (run / "heldout_mlm.json").write_text(json.dumps({
        "accuracy": 0.214, "tokens": 2143, "rows": 18, "unigram_accuracy": 0.061, "unigram_token": ","}))
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--run", str(run),
                                   "--output", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    page = sections((tmp_path / "r.html").read_text(encoding="utf-8"))
    training, table = page["training"], page["hdf5"]
    assert "0.214 against 0.061 for the unigram baseline" in training and "3.5x the baseline" in training
    assert "dynamic: 30% of the tokens, new each epoch; [MASK] / random / kept 100% / 0% / 0%" in training
    assert "masks in training (hu_modern)" in table and "100% / 0% / 0%" in table
    assert "in the files (not used: the run masks anew)" in table


def test_a_run_of_phases_names_the_masks_each_phase_trained_its_rows_with(sample_run, tmp_path):
    """make pretrain --long's run (--phases: hparams.json's input_dir is null, each phase names its
    folder and rate): the HDF5 table says the run masked anew at the phase's rate."""
    data, _ = sample_run
    (hdf5,) = [p for p in (data / "hu").iterdir() if p.name.startswith("hdf5_")]
    run = write_mlm_run(tmp_path / "hu_modern_long", 20, 148, objective="mlm", input_dir=None,
                        masking="dynamic", mlm_probability=0.15, mask_replace_prob=1.0,
                        random_replace_prob=0.0,
                        phase_plan=[{"phase": 1, "input_dir": str(hdf5), "mlm_probability": 0.3},
                                    {"phase": 2, "input_dir": str(tmp_path / "elsewhere"),
                                     "mlm_probability": 0.2}])
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "hu", "report", "--run", str(run),
                                   "--output", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    table = sections((tmp_path / "r.html").read_text(encoding="utf-8"))["hdf5"]
    assert "masks in training (hu_modern_long)" in table and "dynamic: 30% of the tokens" in table
    assert "20% of the tokens" not in table and "in the files (not used: the run masks anew)" in table
