"""bench/bench_recipes.py and bench/recipe_measures.py: the recipes' flags, the steps a
re-planned run reached, packed rows cut into documents, the loss curve it prints."""
from __future__ import annotations

import json

import numpy as np

from tests.helpers.script_module import load_script

bench = load_script("bench/bench_recipes.py")
measures = load_script("bench/recipe_measures.py")


def test_modern_and_modern_across_differ_only_in_their_attention():
    modern, across = bench.RECIPES["modern"], bench.RECIPES["modern-across"]
    assert modern[:2] == across[:2] == ("modern", "modern")
    assert modern[2][:-1] == across[2][:-1]
    assert (modern[2][-2:], across[2][-2:]) == (["--doc_attention", "within"],
                                                ["--doc_attention", "across"])


def _log(run, records):
    run.mkdir(parents=True, exist_ok=True)
    (run / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_steps_reached_are_the_log_s_not_the_first_plan(tmp_path):
    # the budget planned 53 steps, then re-planned to 37 as the machine slowed
    run, hf = tmp_path / "run", tmp_path / "hf"
    run.mkdir()
    (run / "hparams.json").write_text(json.dumps({"max_steps": 53}))
    _log(run, [{"step": 10, "loss": 8.5, "mlm_loss": 8.5},
               {"step": 16, "replan_end": 37, "budget_s": 30.0},
               {"step": 37, "loss": 7.7, "mlm_loss": 7.7},
               {"step": 37, "eval_mlm_loss": 7.8, "eval_mlm_acc": 0.05},
               {"step": 37, "budget_s": 30.0, "budget_spent_s": 31.6}])
    assert bench.steps_reached(run) == 37
    assert not bench.finished(run, hf)          # not exported yet
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    assert bench.finished(run, hf)              # ended by its budget, with no ckpt_00000053
    _log(run, [{"step": 10, "loss": 8.5, "mlm_loss": 8.5}])
    assert not bench.finished(run, hf)          # stopped half way


def test_the_loss_curve_and_the_run_s_own_evaluation(tmp_path):
    records = [{"step": s, "loss": 10.0 - s / 10, "mlm_loss": 10.0 - s / 10} for s in range(10, 90, 10)]
    _log(tmp_path, [*records, {"step": 80, "eval_mlm_loss": 2.0, "eval_mlm_acc": 0.3}])
    got = measures.loss_curve(tmp_path, points=2)
    assert [s for s, _ in got["curve"]] == [40, 80]
    # the mean of the logged losses around each point (steps 30-50, then 70-80)
    assert abs(got["curve"][0][1] - 6.0) < 1e-9 and abs(got["curve"][1][1] - 2.5) < 1e-9
    assert (got["eval_mlm_acc"], got["eval_mlm_loss"]) == (0.3, 2.0)


def test_packed_rows_are_cut_into_their_documents_with_their_masks():
    # row 0: [CLS] a b [SEP] [CLS] c d e [SEP] pad; row 1: a continued document, one segment
    ids = np.array([[101, 5, 6, 102, 101, 7, 8, 9, 102, 0],
                    [101, 10, 11, 12, 102, 0, 0, 0, 0, 0]])
    mask = (ids > 0).astype(np.int8)
    starts = np.zeros_like(ids)
    starts[0, [0, 4]] = 1
    starts[1, 0] = 1
    pos = np.array([[2, 6, 7, 0], [3, 0, 0, 0]])
    orig = np.array([[60, 80, 90, 0], [120, 0, 0, 0]])
    segs = list(measures._segments(ids, mask, starts, pos, orig))
    assert [s[0].tolist() for s in segs] == [[101, 5, 6, 102], [101, 7, 8, 9, 102],
                                             [101, 10, 11, 12, 102]]
    assert [s[1].tolist() for s in segs] == [[2], [2, 3], [3]]     # positions from the segment's start
    assert [s[2].tolist() for s in segs] == [[60], [80, 90], [120]]


def test_the_mask_id_is_read_from_the_language_s_vocab(tmp_path):
    (tmp_path / "uk" / "vocab").mkdir(parents=True)
    (tmp_path / "uk" / "vocab" / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nx\n")
    assert bench.mask_id(tmp_path / "uk") == 4
    assert bench.mask_id(tmp_path / "uk" / "hdf5" / "ukwiki") == 4    # a folder under it
    assert bench.mask_id(tmp_path / "other") == 103                   # none: our vocabs' id


def test_modern_is_make_pretrains_recipe_and_mask_only_its_ablation():
    from recipes.pretrain_commands import RECIPE

    modern, ablation = bench.RECIPES["modern"][2], bench.RECIPES["modern-mask-only"][2]
    split = [modern[modern.index(f) + 1] for f in ("--mask_replace_prob", "--random_replace_prob")]
    assert split == ["0.8", "0.1"] and "--mask_replace_prob" not in RECIPE   # the trainer's default
    assert [ablation[ablation.index(f) + 1] for f in ("--mask_replace_prob", "--random_replace_prob")] == ["1.0", "0.0"]
    for flag in ("--mlm_probability", "--optimizer", "--lr_schedule", "--masking"):
        assert modern[modern.index(flag) + 1] == RECIPE[RECIPE.index(flag) + 1], flag
