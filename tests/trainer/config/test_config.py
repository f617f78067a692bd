"""The trainer's flags and JSON config file (trainer/config/flags.py)."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.trainer_cli import ROOT
from trainer.config import parse_args


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
    assert Path(args.bert_config) == ROOT / "trainer/configs/bert_base.json"
    assert args.train_batch_size * args.gradient_accumulation_steps * 8 == 65536


def test_every_flag_of_run_pretraining_has_a_line_of_help():
    from trainer.config import build_parser

    bare = [a.option_strings[0] for a in build_parser()._actions
            if a.option_strings and not (a.help or "").strip()]
    assert bare == [], f"flags without help: {bare}"
