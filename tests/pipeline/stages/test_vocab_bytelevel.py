"""`pipeline vocab --model-type bytelevel-bpe` (a RoBERTa-style tokenizer.json that AutoTokenizer
loads and encode takes) and `pipeline vocab --compare DIR` (an old tokenizer against the new
vocab on the same held-out words)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.stages.encode import encode
from pipeline.stages.vocab import build_vocab
from tests.helpers.hf_tokenizers import unigram_tokenizer
from vocab.kinds import load_tokenizer


@pytest.fixture(scope="module")
def bl_data(tmp_path_factory, corpus):
    """DATA_DIR with hu/filtered, hu/sharded (its test shard: held-out text) and a byte-level vocab."""
    data = tmp_path_factory.mktemp("bl")
    corpus.write_corpus(data / "hu" / "filtered", corpus.make_sentences(2500, seed=4))
    shards = data / "hu" / "sharded"
    shards.mkdir(parents=True)
    (shards / "huwiki_training_0.txt").write_text("\n\n".join(
        "\n".join(corpus.make_sentences(6, seed=100 + i)) for i in range(40)) + "\n", encoding="utf-8")
    (shards / "huwiki_test_0.txt").write_text("\n".join(corpus.make_sentences(300, seed=7)) + "\n",
                                              encoding="utf-8")
    (shards / "manifest.json").write_text("{}", encoding="utf-8")
    build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=700, model_type="bytelevel-bpe")
    return data


def test_bytelevel_folder_loads_with_autotokenizer(bl_data):
    transformers = pytest.importorskip("transformers")
    folder = bl_data / "hu" / "vocab"
    names = {p.name for p in folder.iterdir()}
    assert {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab_report.json",
            "manifest.json"} <= names and "vocab.txt" not in names and "spm.model" not in names
    spec = load_tokenizer(folder)
    assert spec.kind == "bytelevel-bpe" and spec.piece_model == "bpe" and spec.size == 700 and spec.unk_id is None
    assert spec.tokens[:5] == ("<s>", "<pad>", "</s>", "<unk>", "<mask>") and spec.pad_id == 1
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    text = ["Árvíztűrő tükörfúrógép, Ödön és Éva (1999).", "Київ — 北京 ✓"]
    assert [spec.backend().encode(t, add_special_tokens=False).ids for t in text] == \
        auto(text, add_special_tokens=False)["input_ids"]
    assert auto(text[0])["input_ids"][0] == 0 and auto(text[0])["input_ids"][-1] == 2
    assert "<unk>" not in auto.tokenize(text[1])               # bytes: no unknown character
    assert auto.convert_ids_to_tokens(auto("Éva <mask>")["input_ids"])[-2] == "<mask>"
    rep = json.loads((folder / "vocab_report.json").read_text(encoding="utf-8"))
    assert rep["kind"] == "bpe" and rep["unk_token_share"] == 0 and 1 <= rep["subwords_per_word"] < 4
    assert rep["words"] > rep["sentences"] == 300


def test_same_bytes_for_any_workers_and_the_wordpiece_paths_untouched(bl_data, tmp_path):
    build_vocab(data_dir=bl_data, lang="hu", workers=2, vocab_size=700, model_type="bytelevel-bpe",
                output=tmp_path / "w2")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        assert (tmp_path / "w2" / name).read_bytes() == (bl_data / "hu" / "vocab" / name).read_bytes()
    m = json.loads((bl_data / "hu" / "vocab" / "manifest.json").read_text(encoding="utf-8"))
    assert m["options"]["model_type"] == "bytelevel-bpe" and "character_coverage" not in m["options"]


def test_encode_takes_the_vocab_folder_as_a_tokenizer(bl_data):
    s = encode(data_dir=bl_data, lang="hu", workers=1, max_seq=64, max_pred=10)
    spec = load_tokenizer(bl_data / "hu" / "vocab")
    assert s["output"].split("/")[-2].endswith(f"_tok-vocab-{spec.fingerprint[:8]}")


def test_compare_prints_and_records_both_tokenizers(bl_data, tmp_path):
    transformers = pytest.importorskip("transformers")
    assert transformers
    texts = [s for i in range(30) for s in (f"Ödön és Éva {i}.", "A macska fut a kertben, Budapest.")]
    old = unigram_tokenizer(tmp_path / "xlmr-like", texts, vocab_size=300)
    r = CliRunner().invoke(cli, ["--data-dir", str(bl_data), "--lang", "hu", "vocab", "--compare", str(old)])
    assert r.exit_code == 0, r.output
    rec = json.loads((bl_data / "hu" / "vocab" / "vocab_compare_xlmr-like.json").read_text(encoding="utf-8"))
    assert rec["old"]["kind"] == "unigram" and rec["new"]["kind"] == "bpe"
    assert rec["old"]["words"] == rec["new"]["words"] > 0      # the same words for both
    assert rec["old"]["subwords_per_word"] > rec["new"]["subwords_per_word"]   # a tiny old vocab
    assert rec["new"]["unk_token_share"] == 0 and "test shards" in rec["eval_source"]
    # a WordPiece vocab.txt and its own tokenizer.json count the same words the same way
    from tests.helpers.encode_testdata import vocab_tokens, write_vocab
    from vocab.reports.compare import compare_tokenizers

    sentences = (bl_data / "hu" / "sharded" / "huwiki_test_0.txt").read_text(encoding="utf-8").splitlines()
    wp = load_tokenizer(write_vocab(tmp_path / "wp", vocab_tokens(" ".join(sentences[:150])), lower_case=False))
    wp.save(tmp_path / "wp_json", model_max_length=512, tokenizer_json=True)
    (tmp_path / "wp_json" / "vocab.txt").unlink()
    rep = compare_tokenizers(wp, load_tokenizer(tmp_path / "wp_json"), sentences)
    for key in ("words", "tokens", "unk_tokens", "unk_words", "whole_word_share"):
        assert rep["old"][key] == rep["new"][key], key
    assert rep["old"]["unk_tokens"] > 0


def test_bad_input_is_one_error_line(bl_data, tmp_path):
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(cli, ["--data-dir", str(bl_data), "--lang", "hu", "vocab", "--compare",
                                 str(tmp_path / "empty")])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: --compare")
    assert "holds no tokenizer" in lines[0]
    r = CliRunner().invoke(cli, ["--data-dir", str(bl_data), "--lang", "hu", "vocab", "--model-type",
                                 "bytelevel-bpe", "--vocab-size", "250", "--output", str(tmp_path / "v")])
    assert r.exit_code == 1 and "too small for byte-level BPE" in r.output
