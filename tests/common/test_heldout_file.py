"""common/heldout_file.py: the record `make pretrain` writes is the one the report and the model
card read, and a run without one (or with a torn one) reads as none."""
from __future__ import annotations

import json

from common.heldout_file import HELDOUT, read_heldout, write_heldout
from pipeline.report.training import heldout_text
from trainer.export.card import heldout_row

MEASURE = {"accuracy": 0.214, "tokens": 12345, "rows": 18, "unigram_accuracy": 0.061, "unigram_token": ","}


def test_what_is_written_is_what_the_report_and_the_card_read(tmp_path):
    write_heldout(tmp_path / HELDOUT, MEASURE, tmp_path / "hf", tmp_path / "hdf5", "the line", step=40)
    record = json.loads((tmp_path / HELDOUT).read_text(encoding="utf-8"))
    assert record == {**MEASURE, "model": str(tmp_path / "hf"), "hdf5": str(tmp_path / "hdf5"),
                      "line": "the line", "step": 40}
    assert (tmp_path / HELDOUT).read_text(encoding="utf-8").endswith("}\n")
    assert read_heldout(tmp_path) == record
    assert heldout_text(tmp_path).startswith("0.214 against 0.061 for the unigram baseline (always ',')")
    assert heldout_row(tmp_path, 40).startswith("\n| held-out [MASK] accuracy | 0.214 against 0.061")
    assert heldout_row(tmp_path, 39) == ""      # the measure of another checkpoint's export


def test_no_record_or_a_torn_one_reads_as_none(tmp_path):
    assert read_heldout(tmp_path) == {} and heldout_text(tmp_path) is None
    write_heldout(tmp_path / HELDOUT, MEASURE, tmp_path, tmp_path, "x")
    assert "step" not in read_heldout(tmp_path)
    (tmp_path / HELDOUT).write_text('{"accuracy": 0.2', encoding="utf-8")
    assert read_heldout(tmp_path) == {} and heldout_text(tmp_path) is None and heldout_row(tmp_path, None) == ""


def test_a_file_that_is_json_but_no_record_reads_as_none(tmp_path):
    """A list, a number or null in heldout_mlm.json is no measure: the card's row and the report's
    line are left out (heldout_row asked .get of a list and the export ended in a traceback)."""
    for foreign in ([1, 2], 3, None, "text"):
        (tmp_path / HELDOUT).write_text(json.dumps(foreign), encoding="utf-8")
        assert read_heldout(tmp_path) == {}
        assert heldout_row(tmp_path, 5) == "" and not heldout_text(tmp_path)


def test_a_sample_reads_alike_in_the_report_and_the_card(tmp_path):
    """Issue 60: the measure is a seeded sample of the held-out rows with its standard error; the
    report and the card say the same figure, its error and the sample, and name the measure."""
    sampled = {**MEASURE, "standard_error": 0.0071, "ratio": 3.5, "ratio_standard_error": 0.21, "rows": 34,
               "rows_held_out": 188, "tokens": 4194, "max_tokens": 4096}
    write_heldout(tmp_path / HELDOUT, sampled, tmp_path / "hf", tmp_path / "hdf5", "x", step=40)
    text = ("0.214 ± 0.007 against 0.061 for the unigram baseline (always ','): 3.5x (± 0.2) the baseline, "
            "every token masked once as [MASK], on 4,194 tokens of 34 of 188 held-out rows (a seeded sample)")
    assert heldout_text(tmp_path) == text
    assert heldout_row(tmp_path, 40) == f"\n| held-out [MASK] accuracy | {text} |"
