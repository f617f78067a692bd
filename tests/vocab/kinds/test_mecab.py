"""A Japanese vocab on MeCab words (the `mecab` kind, vocab/kinds/mecab.py; `pipeline --lang ja vocab`): transformers
loads the folder as its BertJapaneseTokenizer and gives encode's ids on held-out sentences;
no piece crosses a MeCab word; `--word-segmenter none` keeps the character-level vocab."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core.errors import StageError
from pipeline.stages.vocab import build_vocab
from vocab.kinds import load_vocab
from vocab.kinds.mecab import MecabWordPiece, mecab_words

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "unspaced" / "ja.txt"
# Not in the fixture: words and characters the vocab has seen, and some it has not.
HELD_OUT = [
    "東京の大学で言語学を学んでいる学生は多い。",
    "富士山の頂上からは、晴れた日に海が見える。",
    "ＡＢＣ放送は１９５１年に設立された。",        # full-width: NFKC makes it ASCII
    "彼女は新しい小説を書き、多くの人々に読まれた。",
    "日本語の小説は世界でも読まれている。",
    "鯱鉾と鰻の蒲焼き。",                          # characters never seen: [UNK]
]


@pytest.fixture(scope="module")
def ja_vocab(tmp_path_factory):
    out = tmp_path_factory.mktemp("ja") / "vocab"
    heldout = out.parent / "heldout.txt"
    heldout.write_text("\n".join(HELD_OUT) + "\n", encoding="utf-8")
    build_vocab(data_dir=out.parent, lang="ja", workers=1, input=FIXTURE, output=out,
                vocab_size=1200, eval_path=heldout)
    return out


def test_transformers_loads_it_as_the_mecab_tokenizer_with_the_same_ids(ja_vocab):
    from transformers import AutoTokenizer

    cfg = json.loads((ja_vocab / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert cfg["word_tokenizer_type"] == "mecab" and cfg["mecab_kwargs"] == {"mecab_dic": "unidic_lite"}
    hf = AutoTokenizer.from_pretrained(str(ja_vocab))
    assert type(hf).__name__ == "BertJapaneseTokenizer"
    spec = load_vocab(ja_vocab)
    assert spec.kind == "mecab" and spec.word_segmenter(None) == "mecab"
    wp = spec.encoder()
    assert isinstance(wp, MecabWordPiece)
    fixture = [s for s in FIXTURE.read_text(encoding="utf-8").splitlines() if s]
    for s in HELD_OUT + fixture:
        assert hf(s, add_special_tokens=False)["input_ids"] == wp.tokenize(s), s
    ids = wp.tokenize(HELD_OUT[-1])
    assert spec.unk_id in ids and wp.tokenize(HELD_OUT[2])[:1] == [spec.id_of("ABC")]


def test_no_piece_crosses_a_mecab_word(ja_vocab):
    spec = load_vocab(ja_vocab)
    wp = MecabWordPiece(spec)
    for s in HELD_OUT[:-1]:
        for word, ids in wp.words_ids(s):
            assert "".join(spec.tokens[i].removeprefix("##") for i in ids) == word
    ids, counts, starts = wp.encode_words("\n".join(HELD_OUT[:2]))
    assert counts.sum() == len(ids) == len(starts)
    assert starts.sum() == sum(len(mecab_words(s)) for s in HELD_OUT[:2])
    # words of several characters are single pieces: the vocab learned MeCab words
    assert {"東京", "大学", "多く"} <= set(spec.tokens)


def test_the_report_counts_mecab_words(ja_vocab):
    rep = json.loads((ja_vocab / "vocab_report.json").read_text(encoding="utf-8"))
    assert rep["words_from"] == "mecab"
    assert rep["words"] == sum(len(mecab_words(s)) for s in HELD_OUT)
    assert {"鯱", "鉾", "鰻"} <= set(rep["unk_examples"])


def test_character_level_stays_an_option(tmp_path):
    out = tmp_path / "vocab"
    build_vocab(data_dir=tmp_path, lang="ja", workers=1, input=FIXTURE, output=out,
                vocab_size=1200, word_segmenter="none")
    cfg = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert cfg["tokenizer_class"] == "BertTokenizer" and load_vocab(out).kind == "wordpiece"
    assert not any(len(t) > 1 and "\u4e00" <= t[0] <= "\u9fff" for t in load_vocab(out).tokens)


def test_mecab_words_cannot_strip_accents(tmp_path):
    with pytest.raises(StageError, match="--strip-accents"):
        build_vocab(data_dir=tmp_path, lang="ja", input=FIXTURE, output=tmp_path / "v",
                    vocab_size=1200, strip_accents=True)


def test_the_config_an_export_writes_loads_as_the_mecab_tokenizer(ja_vocab, tmp_path):
    """What trainer/export/hf.py writes: the kind's save for a model of 128 positions (vocab.txt,
    its tokenizer_config.json, and the fast form's tokenizer.json, which takes MeCab-split text)."""
    from transformers import AutoTokenizer

    spec = load_vocab(ja_vocab)
    spec.save(tmp_path, model_max_length=128, tokenizer_json=True)
    assert {p.name for p in tmp_path.iterdir()} == {"vocab.txt", "tokenizer_config.json", "tokenizer.json"}
    hf = AutoTokenizer.from_pretrained(str(tmp_path))
    assert type(hf).__name__ == "BertJapaneseTokenizer" and hf.model_max_length == 128
    wp = MecabWordPiece(spec)
    assert all(hf(s, add_special_tokens=False)["input_ids"] == wp.tokenize(s) for s in HELD_OUT)
