"""The trainer's flags and JSON config file (trainer/config/flags.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.trainer_cli import ROOT
from trainer.config import ConfigError, parse_args


def test_config_file_values_and_command_line_wins(tiny_bert_config, tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"bert_config": str(tiny_bert_config),
                                                 "input_dir": "d", "output_dir": "o",
                                                 "learning_rate": 1e-3, "max_steps": 50}))
    args = parse_args(["--config_file", str(tmp_path / "c.json"), "--max_steps", "7"])
    assert (args.learning_rate, args.max_steps, args.optimizer) == (1e-3, 7, "lamb")
    assert "learning_rate" in args.explicit and "optimizer" not in args.explicit
    # shipped configs find their model JSON beside them
    args = parse_args(["--config_file", str(ROOT / "trainer/configs/phase1_base.json"),
                       "--input_dir", "d", "--output_dir", "o"])
    assert Path(args.model_config) == ROOT / "trainer/configs/bert_base.json"
    assert args.train_batch_size * args.gradient_accumulation_steps * 8 == 65536


def test_every_flag_of_run_pretraining_has_a_line_of_help():
    from trainer.config import build_parser

    bare = [a.option_strings[0] for a in build_parser()._actions
            if a.option_strings and not (a.help or "").strip()]
    assert bare == [], f"flags without help: {bare}"


@pytest.mark.parametrize("argv, suggestion", [
    (["--lerning_rate", "1e-3"], "did you mean --learning_rate?"),
    (["--max-steps", "3"], "did you mean --max_steps?"),
])
def test_a_misspelled_flag_gets_did_you_mean(argv, suggestion):
    with pytest.raises(ConfigError, match=suggestion.replace("?", r"\?")):
        parse_args(["--bert_config", "c.json", "--input_dir", "d", "--output_dir", "o", *argv])


def test_a_misspelled_config_key_gets_did_you_mean(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text('{"lerning_rate": 0.001}')
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        parse_args(["--config_file", str(cfg), "--bert_config", "c.json", "--input_dir", "d", "--output_dir", "o"])
