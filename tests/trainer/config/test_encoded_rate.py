"""--mlm_probability defaults to the rate the data was encoded with (issue 46): continued
pretraining on data encoded at 30% masks 30% unless told otherwise, and one log line says so."""
from __future__ import annotations

import json
import logging
import shutil

from tests.helpers.trainer_cli import base_args, read_log
from trainer.config import parse_args, resolve_config
from trainer.config.encoded_rate import encoded_rate
from trainer.run_pretraining import main


def encoded_at(src, dst, rate: float):
    """A copy of the shards `src` as `pipeline encode --masked-lm-prob RATE` leaves them: its
    manifest records the option."""
    shutil.copytree(src, dst)
    (dst / "manifest.json").write_text(json.dumps({"stage": "encode", "vocab": "v",
                                                   "options": {"masked_lm_prob": rate}}))
    return dst


def test_the_rate_comes_from_the_manifest_else_the_folder_name(tmp_path):
    assert encoded_rate(None) is None and encoded_rate(tmp_path) is None
    named = tmp_path / "hdf5_lower_case_0_seq_len_128_max_pred_40_masked_lm_prob_0.3_random_seed_12345_dupe_factor_1"
    (named / "huwiki").mkdir(parents=True)
    assert encoded_rate(named) == (0.3, "its folder's name")
    assert encoded_rate(named / "huwiki") == (0.3, "its folder's name")
    (named / "manifest.json").write_text(json.dumps({"options": {"masked_lm_prob": 0.25}}))
    assert encoded_rate(named / "huwiki") == (0.25, "its encode manifest")
    other = tmp_path / "x_masked_lm_prob_0.15_y"
    other.mkdir()
    assert encoded_rate({"hu": str(named), "uk": str(other)}) is None   # two rates: no default
    assert encoded_rate({"hu": str(named), "uk": str(named)}) == (0.25, "its encode manifest")


def test_dynamic_masking_takes_the_encoded_rate_unless_given(tiny_shards, tiny_bert_config, tmp_path):
    data = encoded_at(tiny_shards, tmp_path / "data", 0.3)
    dynamic = base_args(data, tiny_bert_config, tmp_path / "o", masking="dynamic")
    assert resolve_config(parse_args(dynamic)).mlm_probability == 0.3
    given = resolve_config(parse_args(dynamic + ["--mlm_probability", "0.2"]))
    assert given.mlm_probability == 0.2
    static = resolve_config(parse_args(base_args(data, tiny_bert_config, tmp_path / "o")))
    assert static.mlm_probability == 0.15   # static masks: the files' own, the flag unused
    plain = resolve_config(parse_args(base_args(tiny_shards, tiny_bert_config, tmp_path / "o",
                                                masking="dynamic")))
    assert plain.mlm_probability == 0.15     # the data does not say: the flag's default


def test_a_run_records_the_rate_and_says_where_it_came_from(tiny_shards, tiny_bert_config, tiny_vocab,
                                                           tmp_path, caplog):
    data = encoded_at(tiny_shards, tmp_path / "data", 0.12)   # rows hold 5 predictions
    caplog.set_level(logging.INFO, logger="trainer")
    out = tmp_path / "o"
    assert main(base_args(data, tiny_bert_config, out, vocab=tiny_vocab, masking="dynamic",
                          max_steps=2, checkpoint_every=2)) == 0
    assert json.loads((out / "hparams.json").read_text())["mlm_probability"] == 0.12
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("masking: ")]
    assert lines == ["masking: 0.12 of the tokens, the rate --input_dir was encoded with (its encode "
                     "manifest: masked_lm_prob 0.12); --mlm_probability sets another"]
    assert read_log(out)
