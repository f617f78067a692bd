"""A dump through the pipeline as `make pretrain` runs it (recipes/pretrain_commands.py's
commands, in this process through click's runner): the corpus it encodes, for tests that
compare a plan or an estimate with what encode really counted."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli
from recipes.pretrain_commands import MODELS, PACKED, TEXT_STAGES, encode, later_stages, pipeline, text_stage
from recipes.vocab_rule import MODEL_TYPE, body_parameters, corpus_words, suggest_vocab_size


def run_pipeline(cmd: list) -> None:
    """One of the recipe's `python -m pipeline ...` commands, here."""
    res = CliRunner().invoke(cli, [str(x) for x in cmd[3:]], catch_exceptions=False)
    assert res.exit_code == 0, res.output[-3000:]


def encoded_tokens(dump: Path, lang: str, data_dir: Path, device: str = "cpu") -> int:
    """The tokens `pipeline encode` counts for `dump` with make pretrain's settings on `device`
    (its model's vocab rule, its packed rows)."""
    a = argparse.Namespace(lang=lang, dump=dump, data_dir=data_dir, workers=1, force=False,
                           model_type=MODEL_TYPE, allow_unknown_lang=False)
    for stage in TEXT_STAGES:
        run_pipeline(text_stage(a, stage))
    model = json.loads(MODELS[device].read_text(encoding="utf-8"))
    corpus = corpus_words(data_dir / lang / "filtered", lang)
    size, _ = suggest_vocab_size(corpus.words, model["hidden_size"], body_parameters(model), corpus.least)
    for stage in later_stages():
        run_pipeline(pipeline(a, stage, *(["--vocab-size", size] if stage == "vocab" else [])))
    run_pipeline(encode(a, PACKED["max_seq"], PACKED["max_pred"]))
    folder = next((data_dir / lang).glob("hdf5_*_packed"))
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["summary"]["tokens"]
