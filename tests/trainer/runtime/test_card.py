"""The micro-batch a card takes (trainer/runtime/card.py): the table by memory and model that
the trainer on CUDA and `make pretrain --dry-run` plan with, pinned."""
from __future__ import annotations

import json

import pytest

from tests.helpers.trainer_cli import ROOT
from trainer.runtime.card import GIB, CardError, card_rows, fixed_bytes, micro_tokens, token_bytes

BASE = {**json.loads((ROOT / "trainer" / "configs" / "modernbert_base.json").read_text()), "vocab_size": 32000}
SMALL = json.loads((ROOT / "trainer" / "configs" / "modernbert_small.json").read_text())


def test_the_rule_reproduces_the_bench_peak_of_modernbert_base():
    """bench_gpu_modern.py: 22.5 GiB at 32,768 tokens a micro-batch on an H100."""
    peak = (fixed_bytes(BASE) + 32_768 * token_bytes(BASE)) / GIB
    assert peak == pytest.approx(22.5, abs=0.5)


@pytest.mark.parametrize("gib, tokens", [(8, 4_096), (16, 8_192), (24, 16_384), (40, 32_768), (48, 32_768),
                                         (80, 65_536), (94, 65_536), (141, 65_536)])
def test_modernbert_base_micro_batch_by_card_memory(gib, tokens):
    assert micro_tokens(gib, BASE) == tokens


def test_rows_by_sequence_length_on_an_80_gib_card():
    assert [card_rows(80, BASE, seq) for seq in (128, 1024, 8192)] == [512, 64, 8]
    # a smaller model takes more tokens on a smaller card, up to the cap
    assert micro_tokens(8, SMALL) == 65_536 and micro_tokens(8, BASE) == 4_096


def test_a_card_too_small_for_one_row_says_what_it_needs():
    with pytest.raises(CardError) as err:
        card_rows(4, BASE, 8192)
    msg = str(err.value)
    assert "one 8,192-token row does not fit a card of 4 GiB" in msg and "it needs about 10 GiB" in msg
    assert card_rows(4, BASE, 128) == 8   # shorter rows do


def test_the_card_is_named_whatever_its_size():
    """Issue 60: "a 80 GiB card"; "a card of 8 GiB" reads right for every size."""
    with pytest.raises(CardError) as err:
        card_rows(8, BASE, 1 << 20)
    assert "does not fit a card of 8 GiB " in str(err.value)
