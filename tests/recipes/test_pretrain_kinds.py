"""`make pretrain` end to end on what the hu sample does not cover (issue 46): a Japanese corpus
(WordPiece on MeCab words), a Chinese one (jieba's words for masking, a character a piece), a Thai
one (PyThaiNLP's words) and a byte-level BPE tokenizer; each export loads with transformers'
AutoTokenizer and fill-mask hides a word whole and prints its rank. Tiny dumps from
tests/fixtures/unspaced, a 10-second budget."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.pretrain_cli import pretrain
from tests.helpers.wiki_dump import unspaced_dump


def run_and_check(tmp_path: Path, lang: str, dump: Path, *extra) -> str:
    transformers = pytest.importorskip("transformers")
    res = pretrain("--lang", lang, "--dump", dump, "--budget", "10s", "--device", "cpu", "--batch-size", 8,
                   "--data-dir", tmp_path / "data", "--runs", tmp_path / "runs", "--workers", "1", *extra)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    out = res.stdout
    assert "held-out MLM accuracy" in out and "Traceback" not in res.stderr
    assert re.search(r"\n    \[MASK\]( #1)? = .+   \| '.+' ranks \d+ of \d+\n", out)   # a word hidden, its rank
    hf = tmp_path / "runs" / f"{lang}_modern" / "hf"
    assert (hf / "tokenizer.json").is_file()
    tok = transformers.AutoTokenizer.from_pretrained(str(hf))
    assert tok.mask_token_id is not None
    return out


@pytest.mark.slow
def test_make_pretrain_on_japanese_mecab_words(tmp_path):
    pytest.importorskip("fugashi")
    run_and_check(tmp_path, "ja", unspaced_dump(tmp_path, "ja"))
    cfg = (tmp_path / "runs" / "ja_modern" / "hf" / "tokenizer_config.json").read_text(encoding="utf-8")
    assert "BertJapaneseTokenizer" in cfg


@pytest.mark.slow
def test_make_pretrain_on_chinese(tmp_path):
    pytest.importorskip("jieba")
    run_and_check(tmp_path, "zh", unspaced_dump(tmp_path, "zh"))


@pytest.mark.slow
def test_make_pretrain_on_thai_hides_a_word_as_its_own_pieces(tmp_path):
    """Thai: words without spaces between them, sentences with (PyThaiNLP's words for masking).
    The hidden word is masked as the pieces that cover it, as many masks as pieces."""
    pytest.importorskip("pythainlp")
    out = run_and_check(tmp_path, "th", unspaced_dump(tmp_path, "th", joiner=" "))
    command, after = out.split("$ python scripts/fill_mask.py ", 1)[1].split("\n", 1)
    words = re.findall(r"\[\[(.+?)\]\]", command)
    blocks = []                       # (sentence as shown, the pieces its masks hid)
    for line in after.split("\n== ")[0].splitlines():
        if re.fullmatch(r"\s+fill-mask: [\d.]+ s", line):    # the closing step's seconds: its end
            break
        if line.startswith("    [MASK]"):
            blocks[-1][1].append(re.search(r"\| '(.+)' ranks \d+ of \d+$", line).group(1))
        else:
            blocks.append((line, []))
    assert len(blocks) == len(words) >= 1
    for word, (shown, pieces) in zip(words, blocks):
        assert shown.count("[MASK]") == len(pieces)
        assert "".join(p.removeprefix("##") for p in pieces) == word, (word, pieces)


@pytest.mark.slow
def test_make_pretrain_with_a_byte_level_bpe_tokenizer(tmp_path, sample_dump):
    out = run_and_check(tmp_path, "hu", sample_dump, "--model-type", "bytelevel-bpe")
    assert "--model-type bytelevel-bpe" in out
    assert (tmp_path / "data" / "hu" / "vocab" / "tokenizer.json").is_file()
