"""--phases read and checked without data (trainer/config/phases.py): a file or a config file's
list, relative folders beside the file, the shares, the keys, what other flags rule out, and θ
for a family that cannot take it."""
from __future__ import annotations

import json

import pytest

from trainer.config import ConfigError, load_config, parse_args

BASE = ["--bert_config", "m.json", "--output_dir", "o"]


def phases_file(tmp_path, phases, name="phases.json"):
    path = tmp_path / name
    path.write_text(json.dumps(phases))
    return str(path)


def test_a_phase_file_is_read_and_its_folders_found_beside_it(tmp_path):
    (tmp_path / "d128").mkdir()
    f = phases_file(tmp_path, [{"input_dir": "d128", "share": 0.9, "train_batch_size": 64},
                               {"input_dir": "/abs/d1024", "share": 0.1, "global_rope_theta": 160000,
                                "learning_rate": 5e-4, "_comment": "the long phase"}])
    args = parse_args(BASE + ["--phases", f])
    first, second = args.phases
    assert first.input_dir == str(tmp_path / "d128") and first.train_batch_size == 64
    assert second.input_dir == "/abs/d1024" and second.thetas == {"global_rope_theta": 160000.0}
    assert second.learning_rate == 5e-4 and args.input_dir is None


def test_phases_in_a_config_file_and_as_an_object_with_comments(tmp_path):
    (tmp_path / "d").mkdir()
    cfg = tmp_path / "run.json"
    cfg.write_text(json.dumps({"bert_config": "m.json", "phases": [
        {"input_dir": "d", "share": 0.5}, {"input_dir": "e", "share": 0.5}]}))
    args = parse_args(["--config_file", str(cfg), "--output_dir", "o"])
    assert [p.input_dir for p in args.phases] == [str(tmp_path / "d"), "e"]
    f = phases_file(tmp_path, {"_comment": "x", "phases": [{"input_dir": "d", "share": 1}]})
    assert parse_args(BASE + ["--phases", f]).phases[0].share == 1.0


def test_shares_within_rounding_are_normalised(tmp_path):
    f = phases_file(tmp_path, [{"input_dir": "a", "share": 0.3333}, {"input_dir": "b", "share": 0.3333},
                               {"input_dir": "c", "share": 0.3333}])
    shares = [p.share for p in parse_args(BASE + ["--phases", f]).phases]
    assert sum(shares) == pytest.approx(1.0) and shares[0] == pytest.approx(1 / 3)


@pytest.mark.parametrize("phases,message", [
    ([{"input_dir": "a", "share": 0.5}, {"input_dir": "b", "share": 0.4}], "sum to 0.9, not 1"),
    ([{"input_dir": "a", "share": 1.2}, {"input_dir": "b", "share": -0.2}], "share must be a number > 0"),
    ([{"input_dir": "a", "share": 0}], "share must be a number > 0"),
    ([{"input_dir": "a"}], "has no 'share'"),
    ([{"share": 1}], "has no 'input_dir'"),
    ([{"input_dir": "a", "share": 1, "batch_size": 8}], "unknown key 'batch_size'; did you mean 'train_batch_size'"),
    ([{"input_dir": "a", "share": 1, "seq_len": 12.5}], "seq_len must be an integer >= 1"),
    ([{"input_dir": {"hr": "a"}, "share": 1}], "several languages in a phase are not supported"),
    ([{"input_dir": "a", "share": 1, "mlm_probability": 1.5}], "mlm_probability must be in (0, 1)"),
    ([], "expected a non-empty JSON list"),
    ({"input_dir": "a"}, "expected a non-empty JSON list"),
])
def test_bad_phases_are_one_line(tmp_path, phases, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_args(BASE + ["--phases", phases_file(tmp_path, phases), "--masking", "dynamic"])


def test_a_missing_or_broken_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="--phases nope.json not found"):
        parse_args(BASE + ["--phases", "nope.json"])
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        parse_args(BASE + ["--phases", str(tmp_path / "bad.json")])


def test_input_dir_and_phases_together_are_refused(tmp_path):
    f = phases_file(tmp_path, [{"input_dir": "a", "share": 1}])
    with pytest.raises(ConfigError, match="--input_dir d and --phases both name the training data"):
        parse_args(BASE + ["--phases", f, "--input_dir", "d"])
    with pytest.raises(ConfigError, match="--input_dir is required.*or --phases"):
        parse_args(BASE)


def test_what_other_flags_rule_out(tmp_path):
    f = phases_file(tmp_path, [{"input_dir": "a", "share": 1, "mlm_probability": 0.3}])
    with pytest.raises(ConfigError, match="phase 1 sets mlm_probability, which applies to --masking dynamic"):
        parse_args(BASE + ["--phases", f])
    f = phases_file(tmp_path, [{"input_dir": "a", "share": 1, "train_batch_size": 4}])
    with pytest.raises(ConfigError, match="under --deepspeed its config fixes the micro-batch"):
        parse_args(BASE + ["--phases", f, "--deepspeed", "--deepspeed_config", "ds.json"])


def test_theta_for_a_family_that_cannot_take_it(tmp_path, tiny_bert_config):
    f = phases_file(tmp_path, [{"input_dir": "a", "share": 1, "rope_theta": 10000}])
    argv = ["--bert_config", str(tiny_bert_config), "--output_dir", "o", "--phases", f, "--device", "cpu"]
    with pytest.raises(ConfigError, match="BERT has no rotary position embeddings"):
        load_config(argv)
    cfg = tmp_path / "modern.json"
    cfg.write_text(json.dumps({"vocab_size": 200, "hidden_size": 32, "num_hidden_layers": 1,
                               "num_attention_heads": 2, "intermediate_size": 48,
                               "max_position_embeddings": 64}))
    argv[1] = str(cfg)
    with pytest.raises(ConfigError, match="phase 1 sets rope_theta; ModernBERT takes global_rope_theta / "
                                          "local_rope_theta"):
        load_config(argv + ["--model_type", "modernbert"])
    ok = phases_file(tmp_path, [{"input_dir": "a", "share": 1, "local_rope_theta": 10000}], "ok.json")
    config = load_config(["--bert_config", str(cfg), "--output_dir", "o", "--phases", ok, "--device", "cpu",
                          "--model_type", "modernbert"])
    assert config.phases[0].thetas == {"local_rope_theta": 10000.0}
