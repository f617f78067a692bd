"""The trainer's flags, declared by component (trainer/config/options/): the same flags as the one
parser they were split from, each in its component's help group."""
import json
from pathlib import Path

from trainer.config.flags import build_parser

# every flag as the single build_parser had it before the split (captured on main): options,
# dest, default, help, choices, type, action and metavar
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
