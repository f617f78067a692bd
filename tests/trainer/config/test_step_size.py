"""A step sized in tokens (trainer/config/step_size.py): each phase's micro-batch and
accumulation from --tokens_per_step, and the one line that says what would fit."""
from __future__ import annotations

import pytest

from trainer.config.errors import ConfigError
from trainer.config.step_size import StepSize, row_unit, size_steps


def test_the_same_tokens_every_phase_the_micro_batch_at_most_its_cap():
    sizes = size_steps(524_288, [128, 1024, 8192], 1, [512, 64, 8])
    assert sizes == [StepSize(4096, 512, 8), StepSize(512, 64, 8), StepSize(64, 8, 8)]
    assert all(z.rows * seq == 524_288 for z, seq in zip(sizes, [128, 1024, 8192]))
    # two ranks: half the rows a rank; a cap that does not divide the rows: its largest divisor below
    assert size_steps(3 * 2 * 64, [64], 2, [2]) == [StepSize(3, 1, 3)]
    assert size_steps(2048, [64, 128], 2, [32, 32]) == [StepSize(16, 16, 1), StepSize(8, 8, 1)]


def test_the_log_line_says_micro_batch_accumulation_and_tokens():
    line = StepSize(4096, 512, 8).line(1, 128, 1, phases=3)
    assert line == ("step size, phase 1 of 3 (128-token rows): micro-batch 512 rows x 8 accumulation "
                    "= 524,288 tokens a step")
    assert "x 2 ranks = 1,024 tokens" in StepSize(4, 2, 2).line(1, 128, 2)


@pytest.mark.parametrize("n, seqs, world, said", [
    (1000, [128], 1, "--tokens_per_step 1,000 is not a multiple of a row a rank (128-token rows on 1 rank: "
                     "128 tokens): give 896 or 1,024"),
    (4096, [128, 1024, 8192], 1, "--tokens_per_step 4,096 is less than one row a rank of 128 / 1,024 / 8,192 "
                                 "tokens on 1 rank: give at least 8,192"),
    (8192, [1024], 3, "give 6,144 or 9,216"),
])
def test_a_step_that_does_not_fit_rows_is_one_line_that_says_what_would(n, seqs, world, said):
    with pytest.raises(ConfigError) as err:
        size_steps(n, seqs, world, [8] * len(seqs))
    assert said in str(err.value)
    assert row_unit([128, 1024, 8192], 2) == 16_384
