"""The demo's "did it learn" measure: every real held-out token predicted once, and the unigram
baseline on the same positions (always the training rows' most frequent token); a seeded sample
of the held-out rows up to --max-tokens, with the standard error over its rows (issue 60)."""
from __future__ import annotations

import h5py
import numpy as np
import pytest

from recipes.heldout_mlm import heldout_accuracy, heldout_rows, main, standard_error, summary_line, verdict_lines
from tests.helpers.modern_run_dir import make_modern_run_dir
from trainer.export import main as export_main

CLS, SEP, MASK = 101, 102, 103


def write_rows(path, rows: list[list[int]], seq: int = 16, masked: int = 2):
    """Packed-style rows with a static mask on the first `masked` tokens after [CLS]."""
    ids = np.zeros((len(rows), seq), np.int32)
    mask = np.zeros((len(rows), seq), np.int8)
    pos = np.zeros((len(rows), 4), np.int32)
    orig = np.zeros((len(rows), 4), np.int32)
    for i, r in enumerate(rows):
        ids[i, :len(r)], mask[i, :len(r)] = r, 1
        for j in range(masked):
            pos[i, j], orig[i, j] = 1 + j, r[1 + j]
            ids[i, 1 + j] = MASK
    with h5py.File(path, "w") as f:
        for key, value in (("input_ids", ids), ("input_mask", mask), ("segment_ids", 0 * mask),
                           ("masked_lm_positions", pos), ("masked_lm_ids", orig),
                           ("next_sentence_labels", np.zeros(len(rows), np.int8))):
            f.create_dataset(key, data=value)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("heldout")
    make_modern_run_dir(root / "run")
    assert export_main(["--checkpoint_dir", str(root / "run"), "--output", str(root / "hf")]) == 0
    data = root / "hdf5_x_packed" / "xxwiki"
    data.mkdir(parents=True)
    # token 110 is the most frequent in training (masked ones count, restored); 111 in test
    write_rows(data / "xxwiki_training_0.hdf5", [[CLS, 110, 110, 110, 112, SEP], [CLS, 110, 113, SEP]])
    write_rows(data / "xxwiki_test_0.hdf5", [[CLS, 111, 111, 110, 114, 111, SEP, 111, 112, SEP]])
    return root


@pytest.fixture(scope="module")
def many_rows(setup):
    """40 held-out rows in two test files (ids 110-117): 20 of 8 tokens, then 20 of 7."""
    data = setup / "hdf5_many_packed" / "xxwiki"
    data.mkdir(parents=True)
    write_rows(data / "xxwiki_training_0.hdf5", [[CLS, 110, 110, 110, 112, SEP]])
    for f in range(2):
        write_rows(data / f"xxwiki_test_{f}.hdf5",
                   [[CLS] + [110 + (r + k) % 8 for k in range(8 - f)] + [SEP] for r in range(20)])
    return setup / "hdf5_many_packed"


def test_a_bounded_sample_of_rows_with_its_standard_error(setup, many_rows):
    """Issue 60: every held-out row took minutes on a CPU; a cap on the tokens reads a seeded
    sample of the rows (from both files, not the first rows), whole rows, and says so; 0 reads them all."""
    full = heldout_accuracy(setup / "hf", many_rows, mask_share=0.3, max_tokens=0)
    assert (full["rows"], full["rows_held_out"], full["tokens"]) == (40, 40, 300)
    rows, maskable, held_out = heldout_rows(sorted(many_rows.rglob("*_test_*.hdf5")), [CLS, SEP], 60, 2000)
    lengths = [int(m.sum()) for m in maskable]
    assert held_out == 40 and sum(lengths[:-1]) < 60 <= sum(lengths) and set(lengths) == {7, 8}   # both files
    sample = heldout_accuracy(setup / "hf", many_rows, mask_share=0.3, max_tokens=60)
    assert sample["rows"] == len(rows) < 40 and sample["tokens"] == sum(lengths) and sample["rows_held_out"] == 40
    assert sample == heldout_accuracy(setup / "hf", many_rows, mask_share=0.3, max_tokens=60)   # seeded
    assert sample["unigram_token"] == full["unigram_token"] and 0 <= sample["standard_error"] < 0.5
    assert f"on {sum(lengths)} tokens ({len(rows)} of 40 held-out rows, a seeded sample)" in summary_line(sample)
    assert " ± " in summary_line(sample) and "every token masked once as [MASK]" in summary_line(sample)
    assert f"({len(rows)} of 40 held-out rows, a seeded sample)" in verdict_lines(sample)[0]
    # a cap above what the test rows hold: all of them, the same figure as without a cap
    everything = heldout_accuracy(setup / "hf", many_rows, mask_share=0.3, max_tokens=10_000)
    assert everything == {**full, "max_tokens": 10_000}
    assert main([str(setup / "hf"), str(many_rows), "--max-tokens", "-1"]) == 1


def test_the_standard_error_is_over_rows():
    """Rows of equal length: the ratio estimator's standard error is the rows' accuracies' sd / sqrt(n)."""
    right, total = [2, 4, 6, 8], [10, 10, 10, 10]
    shares = [r / t for r, t in zip(right, total)]
    mean = sum(shares) / 4
    sd = (sum((x - mean) ** 2 for x in shares) / 3) ** 0.5
    assert standard_error(right, total) == pytest.approx(sd / 2)
    assert standard_error([3], [10]) == 0.0


def test_every_held_out_token_once_and_the_unigram_baseline(setup):
    r = heldout_accuracy(setup / "hf", setup / "hdf5_x_packed", mask_share=0.3)
    assert r["tokens"] == 7 and r["rows"] == 1   # the real tokens but [CLS] and [SEP]
    assert r["unigram_token"] == "##gép"   # id 110 of the helper's vocab
    assert r["unigram_accuracy"] == pytest.approx(1 / 7)
    assert 0 <= r["accuracy"] <= 1
    assert heldout_accuracy(setup / "hf", setup / "hdf5_x_packed", mask_share=0.3) == r   # seeded


def test_the_verdict_reads_as_learned_only_well_above_the_baseline():
    r = {"tokens": 2195, "accuracy": 0.25, "unigram_accuracy": 0.05, "unigram_token": "."}
    first, second = verdict_lines(r, 4)
    assert "On 2,195 tokens of 4 held-out articles" in first and "25.0%" in first
    assert "('.') gets 5.0%: 5.0x that: it learned" in second
    assert "not learned more than word frequencies" in verdict_lines(dict(r, accuracy=0.051))[1]


def test_bad_input_is_one_error_line(setup, tmp_path, capsys):
    assert main([str(tmp_path), str(setup / "hdf5_x_packed")]) == 1
    assert capsys.readouterr().err.startswith("Error: ")
    assert main([str(setup / "hf"), str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and "no *_test_*.hdf5" in err


def test_the_measure_runs_on_the_device_asked(setup, capsys):
    """--device cuda (make pretrain's, after a GPU run): the same tokens and baseline on the card,
    the accuracy within bf16's rounding of the CPU's; where no GPU is visible, one Error line."""
    import torch

    cpu = heldout_accuracy(setup / "hf", setup / "hdf5_x_packed", mask_share=0.3, device="cpu")
    if torch.cuda.is_available():
        gpu = heldout_accuracy(setup / "hf", setup / "hdf5_x_packed", mask_share=0.3, device="cuda")
        assert {k: gpu[k] for k in ("tokens", "rows", "unigram_token", "unigram_accuracy")} == \
            {k: cpu[k] for k in ("tokens", "rows", "unigram_token", "unigram_accuracy")}
        assert gpu["accuracy"] == pytest.approx(cpu["accuracy"], abs=2 / 7)
    else:
        assert main([str(setup / "hf"), str(setup / "hdf5_x_packed"), "--device", "cuda"]) == 1
        err = capsys.readouterr().err
        assert err.strip().splitlines() == ["Error: --device cuda: no CUDA GPU is visible here (use --device cpu)"]
