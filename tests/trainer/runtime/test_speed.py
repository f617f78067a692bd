"""trainer/runtime/speed.py: compile and unpadding default to on only where measured faster (CUDA, bf16,
no DeepSpeed); a user's choice always wins; the run says which."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.helpers.trainer_cli import base_args, read_log
from trainer.config import parse_args
from trainer.models import get_family
from trainer.run_pretraining import main
from trainer.runtime.speed import auto_speed, resolve_speed_options


@pytest.mark.parametrize("device,precision,deepspeed,expected", [
    ("cuda", "bf16", False, True), ("cuda", "fp16", False, False), ("cuda", "fp32", False, False),
    ("cuda", "bf16", True, False), ("cpu", "bf16", False, False), ("cpu", "fp32", False, False)])
def test_auto_only_for_cuda_bf16_without_deepspeed(device, precision, deepspeed, expected):
    assert auto_speed(device, precision, deepspeed) is expected


def test_given_choices_win_and_the_note_says_which_were_defaults():
    args = SimpleNamespace(torch_compile=None, unpad=False, deepspeed=False)
    compiled, unpad, note = resolve_speed_options(args, "cuda", "bf16", get_family("bert"))
    assert (compiled, unpad) == (True, False)
    assert note == "speed: torch.compile on, unpadding off (torch.compile: the default for cuda bf16)"


def test_flags_and_config_keys_both_ways(tmp_path):
    common = ["--bert_config", "c.json", "--input_dir", "d", "--output_dir", "o"]
    assert parse_args(common).torch_compile is None and parse_args(common).unpad is None
    args = parse_args(common + ["--no-torch_compile", "--unpad"])
    assert (args.torch_compile, args.unpad) == (False, True)
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{"torch_compile": false, "unpad": true}')
    args = parse_args(common + ["--config_file", str(cfg)])
    assert (args.torch_compile, args.unpad) == (False, True)


def test_a_cpu_run_keeps_both_off_and_records_it(tiny_shards, tiny_bert_config, tmp_path, caplog):
    import json

    out = tmp_path / "run"
    with caplog.at_level("INFO", logger="trainer"):
        assert main(base_args(tiny_shards, tiny_bert_config, out, max_steps=2)) == 0
    assert ("speed: torch.compile off, unpadding off (torch.compile and unpadding: the default for "
            "cpu fp32)") in caplog.text
    hparams = json.loads((out / "hparams.json").read_text())
    assert hparams["torch_compile"] is False and hparams["unpad"] is False
    assert len([r for r in read_log(out) if "loss" in r]) == 2


@pytest.mark.parametrize("name", ["modernbert", "roberta", "xlm-roberta", "distilbert"])
def test_transformers_families_unpad_where_bert_does(name):
    """transformers' networks unpad through trainer/models/hf_varlen.py: the default for CUDA
    bf16, as BERT's."""
    args = SimpleNamespace(torch_compile=None, unpad=None, deepspeed=False)
    _, unpad, note = resolve_speed_options(args, "cuda", "bf16", get_family(name))
    assert unpad is True and "unpadding on" in note, note


def test_a_family_without_unpadding_never_says_unpadding_on():
    """A family that cannot unpad: the speed line says so, even where unpadding is the default
    (CUDA bf16) or asked for."""
    toy = SimpleNamespace(unpads=False, display_name="Toy")
    for given in (None, True):
        args = SimpleNamespace(torch_compile=None, unpad=given, deepspeed=False)
        _, unpad, note = resolve_speed_options(args, "cuda", "bf16", toy)
        assert unpad is False and "unpadding off (Toy has none)" in note, note
