"""The demo's "did it learn" measure: every real held-out token predicted once, and the unigram
baseline on the same positions (always the training rows' most frequent token)."""
from __future__ import annotations

import h5py
import numpy as np
import pytest

from recipes.heldout_mlm import heldout_accuracy, main, verdict_lines
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
