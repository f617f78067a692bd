"""--input_dir LANG=DIR and --sampling_alpha (trainer/config/languages.py): the forms the flags
and the config file take, and each mistake as one line."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest

from trainer.config import ConfigError, parse_args
from trainer.config.languages import parse_alpha_schedule

BASE = ["--bert_config", "c.json", "--output_dir", "o"]


def args(*argv):
    return parse_args([*BASE, *argv])


def test_one_folder_stays_a_folder_and_languages_are_sorted_by_code():
    assert args("--input_dir", "/d/hu").input_dir == "/d/hu"
    a = args("--input_dir", "sr=/d/sr", "--input_dir", "hr=/d/hr", "--input_dir", "zh-yue=/d/y")
    assert a.input_dir == {"hr": "/d/hr", "sr": "/d/sr", "zh-yue": "/d/y"}
    assert list(a.input_dir) == ["hr", "sr", "zh-yue"]
    # a folder whose name holds '=' is a path, not a language
    assert args("--input_dir", "/d/a=b").input_dir == "/d/a=b"
    assert args("--input_dir", "./x=y").input_dir == "./x=y"
    # one language alone is a run of languages (its eval keys, its card section)
    assert args("--input_dir", "hr=/d/hr").input_dir == {"hr": "/d/hr"}


def test_the_config_file_takes_an_object_a_list_or_a_string_and_the_command_line_wins(tmp_path):
    cfg = tmp_path / "c.json"
    for value in ({"sr": "/d/sr", "hr": "/d/hr"}, ["hr=/d/hr", "sr=/d/sr"]):
        cfg.write_text(json.dumps({"input_dir": value, "sampling_alpha": 0.7}))
        a = parse_args([*BASE, "--config_file", str(cfg)])
        assert a.input_dir == {"hr": "/d/hr", "sr": "/d/sr"} and a.sampling_alpha == "0.7"
        assert "sampling_alpha" in a.explicit
        # given on the command line, --input_dir replaces the file's (it does not add to it)
        a = parse_args([*BASE, "--config_file", str(cfg), "--input_dir", "bs=/d/bs",
                        "--input_dir", "hr=/d/hr"])
        assert a.input_dir == {"bs": "/d/bs", "hr": "/d/hr"}
    cfg.write_text(json.dumps({"input_dir": "/d/hu"}))
    assert parse_args([*BASE, "--config_file", str(cfg)]).input_dir == "/d/hu"
    cfg.write_text(json.dumps({"input_dir": {"hr": 3}}))
    with pytest.raises(ConfigError, match="must map language codes to folders"):
        parse_args([*BASE, "--config_file", str(cfg)])


@pytest.mark.parametrize("argv, message", [
    (["--input_dir", "hr=/a", "--input_dir", "hr=/b"], "language hr is given twice"),
    (["--input_dir", "hr=/a", "--input_dir", "HR=/b"], "language HR is given twice"),
    (["--input_dir", "hr=/a", "--input_dir", "sr=/a/"], "name the same folder"),
    (["--input_dir", "/a", "--input_dir", "hr=/b"], "--input_dir /a has no language while others do"),
    (["--input_dir", "/a", "--input_dir", "/b"], "given 2 times without languages"),
    (["--input_dir", "hr1=/a"], "'hr1' is not a language code"),
    (["--input_dir", "h r=/a"], "'h r' is not a language code"),
    (["--input_dir", "hr="], "give the folder after '='"),
    (["--input_dir", "/a", "--sampling_alpha", "0.5"], "--sampling_alpha applies to several languages"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "0.5,x"], "exponent 'x' is not a number"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "1.5"], "exponent 1.5 is outside \\[0, 1\\]"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "-0.1"], "outside \\[0, 1\\]"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "0.7,,0.3"], "empty part"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "0.7@0,0.3"], "to every exponent or to none"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "0.7@0.1,0.3@0.5"], "must start at @0"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "0.7@0,0.3@0.5,0.1@0.4"], "must increase from 0"),
    (["--input_dir", "hr=/a", "--sampling_alpha", "0.7@0,0.3@1"], "stay below 1"),
])
def test_each_mistake_is_one_line(argv, message):
    with pytest.raises(ConfigError, match=message) as err:
        args(*argv)
    assert "\n" not in str(err.value)


def test_the_two_schedule_forms():
    assert parse_alpha_schedule("0.3") == [(0.3, 0)]
    assert parse_alpha_schedule("0.7,0.5,0.3") == [(0.7, 0), (0.5, Fraction(1, 3)), (0.3, Fraction(2, 3))]
    assert parse_alpha_schedule(" 0.7@0, 0.5@0.4, 0.3@0.8") == [
        (0.7, 0), (0.5, Fraction(2, 5)), (0.3, Fraction(4, 5))]
    assert parse_alpha_schedule("0") == [(0.0, 0)] and parse_alpha_schedule("1") == [(1.0, 0)]
