"""The trainer's flags, declared and checked by component (trainer/config/options/): the same flags
as the one parser they were split from, each in its component's help group."""
import json
from pathlib import Path

import pytest

from trainer.config.errors import ConfigError
from trainer.config.flags import build_parser, parse_args
from trainer.config.options import COMPONENTS

# every flag as the single build_parser had it before the split (captured on main; flags added since
# are appended, as --extend): options, dest, default, help, choices, type, action and metavar
BEFORE = Path(__file__).with_name("flags_before_split.json")


def describe(action) -> dict:
    return {"options": action.option_strings, "dest": action.dest, "default": repr(action.default),
            "help": action.help, "choices": list(action.choices) if action.choices else None,
            "type": getattr(action.type, "__name__", None),
            "action": type(action).__name__.lstrip("_"), "metavar": action.metavar}


def test_the_flags_are_those_of_the_parser_before_the_split():
    before = {row["dest"]: row for row in json.loads(BEFORE.read_text(encoding="utf-8"))}
    now = {a.dest: describe(a) for a in build_parser()._actions}
    assert sorted(now) == sorted(before)
    for dest, row in before.items():
        assert now[dest] == row, dest


def test_each_flag_is_in_its_components_group_and_in_the_help():
    parser = build_parser()
    groups = {g.title: [a.dest for a in g._group_actions] for g in parser._action_groups}
    assert sorted(groups["options"]) == ["config_file", "help", "seed"]   # the whole run's
    assert "input_dir" in groups["data and batches"] and "lr_schedule" in groups["optimizer and schedule"]
    assert "train_budget" in groups["budget"] and "deepspeed" in groups["device, precision and distributed"]
    text = parser.format_help()
    for title in groups:
        if title != "positional arguments":
            assert f"\n{title}:" in text
    for action in parser._actions:
        if action.help != "==SUPPRESS==":
            assert all(option in text for option in action.option_strings), action.dest


@pytest.mark.parametrize("flag, value, said", [
    ("--train_batch_size", "0", "--train_batch_size must be >= 1, got 0"),                 # data
    ("--mlm_probability", "1.5", "--mlm_probability applies to --masking dynamic"),        # masking
    ("--learning_rate", "0", "--learning_rate must be > 0, got 0.0"),                      # optimizer
    ("--max_steps", "0", "--max_steps must be >= 1, got 0"),                               # budget
    ("--keep_checkpoints", "0", "--keep_checkpoints must be >= 1, got 0"),                 # checkpoint
    ("--deepspeed", None, "--deepspeed needs --deepspeed_config"),                         # distributed
    ("--eval_every", "-1", "--eval_every must be >= 0, got -1"),                           # logs
    ("--max_position_embeddings", "1024", "--max_position_embeddings"),                     # model
])
def test_each_component_checks_its_own_flags(flag, value, said):
    argv = ["--input_dir", "d", "--output_dir", "o", "--model_config", "m.json", flag]
    with pytest.raises(ConfigError) as err:
        parse_args(argv + ([value] if value is not None else []))
    assert str(err.value).startswith(said)


def test_every_component_declares_and_checks():
    for component in COMPONENTS:
        assert callable(component.add_flags) and callable(component.check), component.__name__
