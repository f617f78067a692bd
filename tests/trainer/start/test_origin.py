"""Where a run starts (trainer/start/origin.py, trainer/config/init_from.py): each mistake is one `Error:`
line before anything is written: a folder that holds no model, an architecture no family covers
(as --init_from and as --model_config), a --model_type that contradicts --init_from, a model and
data of different tokenizers (with the remedy: --vocab_file NEW adapts the vocabulary), a
--vocab_file that is not the data's, a tokenizer folder without a fast tokenizer."""
from __future__ import annotations

import json

import pytest

from tests.helpers import trainer_cli
from tests.helpers.pretrained_models import save_model, tokenizer_folder, write_tokenized_shards
from tests.helpers.trainer_cli import base_args
from tests.trainer.models.test_families import init_args

pytestmark = pytest.mark.usefixtures("one_thread")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Tokenizers, an XLM-R folder of the Unigram one, data of each tokenizer."""
    root = tmp_path_factory.mktemp("made")
    unigram, wordpiece = tokenizer_folder(root, "unigram"), tokenizer_folder(root, "wordpiece")
    return {"unigram": unigram, "wordpiece": wordpiece,
            "xlmr": save_model(root / "xlmr", "XLMRobertaForMaskedLM", unigram),
            "data_unigram": write_tokenized_shards(root / "d1", unigram),
            "data_wordpiece": write_tokenized_shards(root / "d2", wordpiece)}


def one_error(capsys, argv, *expected):
    """One `Error: ` line holding each of `expected`, and nothing else on stderr."""
    return trainer_cli.one_error(capsys, argv, *expected, alone=True)


def test_a_folder_that_holds_no_model(made, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    one_error(capsys, init_args(made["data_unigram"], empty, tmp_path / "o"), "holds no model",
              "a transformers model folder", "a wiki2bert run")
    one_error(capsys, init_args(made["data_unigram"], made["unigram"], tmp_path / "o"), "holds no model")
    one_error(capsys, init_args(made["data_unigram"], tmp_path / "nowhere", tmp_path / "o"), "does not exist")
    assert not (tmp_path / "o").exists()


def test_a_config_that_is_no_models_is_named_so(made, tmp_path, capsys):
    """Issue 46: a sentence-transformers `1_Pooling` folder (a config.json without model_type)
    is named for what it is, with the folder to give instead, not `no model_type is not an
    architecture ...`."""
    st = tmp_path / "st"
    (st / "1_Pooling").mkdir(parents=True)
    (st / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32,
                                                              "pooling_mode_mean_tokens": True}))
    (st / "modules.json").write_text("[]")
    (st / "config.json").write_text(json.dumps({"model_type": "xlm-roberta"}))
    line = one_error(capsys, init_args(made["data_unigram"], st / "1_Pooling", tmp_path / "o"),
                     "holds no model: it is a module of a sentence-transformers model (1_Pooling)",
                     f"the folder above it: --init_from {st.resolve()}")
    assert "is not an architecture" not in line
    alone = tmp_path / "pooling"
    alone.mkdir()
    (alone / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    one_error(capsys, init_args(made["data_unigram"], alone, tmp_path / "o"),
              "holds no model: its config.json has no model_type", "a transformers model folder")


def test_an_architecture_no_family_covers(made, tmp_path, capsys):
    gpt2 = tmp_path / "gpt2"
    gpt2.mkdir()
    (gpt2 / "config.json").write_text(json.dumps({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                                                  "vocab_size": 50, "n_embd": 16}))
    (gpt2 / "model.safetensors").write_bytes(b"")
    for argv in (init_args(made["data_unigram"], gpt2, tmp_path / "o"),
                 base_args(made["data_unigram"], gpt2 / "config.json", tmp_path / "o")):
        one_error(capsys, argv, "model_type 'gpt2' (GPT2LMHeadModel)", "bert, modernbert, roberta, "
                  "xlm-roberta, distilbert")


def test_a_model_type_that_contradicts_init_from(made, tmp_path, capsys):
    one_error(capsys, init_args(made["data_unigram"], made["xlmr"], tmp_path / "o", model_type="bert"),
              "--model_type bert contradicts", "xlm-roberta model")


def test_a_model_and_data_of_different_tokenizers(made, tmp_path, capsys):
    one_error(capsys, init_args(made["data_wordpiece"], made["xlmr"], tmp_path / "o"),
              "was encoded with the tokenizer", "not with --init_from", "--vocab_file NEW",
              "adapt the vocabulary")
    one_error(capsys, init_args(made["data_wordpiece"], made["xlmr"], tmp_path / "o", vocab_file=made["unigram"]),
              f"--vocab_file {made['unigram']} is not the tokenizer")


def test_a_tokenizer_folder_without_a_fast_tokenizer(made, tmp_path, capsys):
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "XLMRobertaTokenizer"}))
    (slow / "sentencepiece.bpe.model").write_bytes(b"not a sentencepiece model")
    one_error(capsys, init_args(made["data_unigram"], made["xlmr"], tmp_path / "o", vocab_file=slow),
              str(slow), "tokenizer.json")
