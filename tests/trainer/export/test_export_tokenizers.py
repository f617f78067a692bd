"""Every export loads with transformers' AutoTokenizer, whatever the tokenizer's kind and the
model's family, and carries a tokenizer.json where the kind has a fast form (issue 46: a
ModernBERT export of WordPiece on MeCab words held BertJapaneseTokenizer's settings and no
tokenizer.json, and AutoTokenizer tried to convert it; a BERT export, the continued-pretraining
one of a BertForMaskedLM included, had no tokenizer.json)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from pipeline.cli import cli
from tests.helpers.hf_tokenizers import BUILDERS
from tests.helpers.pretrained_models import sentences
from tests.helpers.trainer_run_dir import write_vocab
from trainer.export import export
from trainer.models import get_family
from vocab.kinds import load_tokenizer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "unspaced"
SHAPES = {
    "bert": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                 max_position_embeddings=64, type_vocab_size=2),
    "modernbert": dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=48,
                       max_position_embeddings=64, global_attn_every_n_layers=3, local_attention=16),
}
JA = "東京は日本の首都であり、世界でも有数の大都市である。"
TEXT = "Budapest Magyarország fővárosa, a Duna két partján."


def tokenizer(root: Path, kind: str) -> Path:
    """A tokenizer folder of `kind`, trained here."""
    if kind == "mecab":   # `pipeline --lang ja vocab`: WordPiece on MeCab words
        pytest.importorskip("fugashi")
        res = CliRunner().invoke(cli, ["--data-dir", str(root / "data"), "--lang", "ja", "--workers", "1",
                                       "vocab", "--input", str(FIXTURES / "ja.txt"), "--vocab-size", "1200"])
        assert res.exit_code == 0, res.output
        return root / "data" / "ja" / "vocab"
    folder = root / f"tok_{kind}"
    BUILDERS[kind](folder, [s for doc in sentences() for s in doc], vocab_size=300)
    return folder


def run_dir(root: Path, tok: Path, family_name: str, export_class: str | None = None) -> Path:
    """A run's output dir as the trainer leaves it: the tokenizer saved by its kind, one checkpoint."""
    spec = load_tokenizer(tok)
    spec.save(root)
    family = get_family(family_name)
    config = family.read_config({**SHAPES[family_name], "vocab_size": -(-spec.size // 8) * 8}, "test")
    torch.manual_seed(0)
    model = family.build(config, unpad=False, nsp=False).eval()
    ckpt = root / "checkpoints" / "ckpt_00000010"
    ckpt.mkdir(parents=True)
    torch.save(model.state_dict(), ckpt / "model.pt")
    meta = {"step": 10, "phase": 1, "model_config": family.config_dict(config), "model_type": family_name,
            "world_size": 1, "format_version": 1}
    if export_class:
        meta["export_class"] = export_class
    (ckpt / "meta.json").write_text(json.dumps(meta))
    return root


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bert", "modernbert"])
@pytest.mark.parametrize("kind", ["vocab.txt", "mecab", "wordpiece", "bpe", "unigram"])
def test_every_export_loads_with_autotokenizer_and_gives_the_kinds_ids(tmp_path, kind, family):
    """vocab.txt: the pipeline's WordPiece; mecab: WordPiece on MeCab words; wordpiece / bpe /
    unigram: transformers fast tokenizers (BERT's tokenizer.json, byte-level BPE, Unigram)."""
    transformers = pytest.importorskip("transformers")
    if kind == "vocab.txt":   # the pipeline's vocab: a vocab.txt and its tokenizer_config.json only
        tok = tokenizer(tmp_path, "wordpiece")
        spec = load_tokenizer(tok)
        tok = tmp_path / "plain"
        tok.mkdir()
        (tok / "vocab.txt").write_text("\n".join(spec.tokens) + "\n", encoding="utf-8")
        (tok / "tokenizer_config.json").write_text('{"do_lower_case": false}', encoding="utf-8")
    else:
        tok = tokenizer(tmp_path, kind)
    export(run_dir(tmp_path / "run", tok, family), tmp_path / "hf")
    hf = tmp_path / "hf"
    assert (hf / "tokenizer.json").is_file()
    auto = transformers.AutoTokenizer.from_pretrained(str(hf))
    spec = load_tokenizer(hf)
    text = JA if kind == "mecab" else TEXT
    given = spec.fast_text(text) if auto.is_fast else text   # MeCab's words, for tokenizer.json
    assert auto(given, add_special_tokens=False)["input_ids"] == spec.word_ids([text])[0]
    assert auto.mask_token_id == spec.mask_id and auto.pad_token_id == spec.pad_id


@pytest.mark.slow
def test_the_mecab_fast_form_equals_mecab_on_split_text_and_bert_keeps_mecab(tmp_path):
    """tokenizer.json of a MeCab vocab gives BertJapaneseTokenizer's ids on MeCab-split text;
    a BERT export still loads as BertJapaneseTokenizer (MeCab itself, raw text)."""
    transformers = pytest.importorskip("transformers")
    tok = tokenizer(tmp_path, "mecab")
    export(run_dir(tmp_path / "run", tok, "bert"), tmp_path / "hf")
    slow = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    assert type(slow).__name__ == "BertJapaneseTokenizer"
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "hf" / "tokenizer.json"))
    spec = load_tokenizer(tmp_path / "hf")
    for line in (FIXTURES / "ja.txt").read_text(encoding="utf-8").splitlines()[:12]:
        if line.strip():
            want = slow(line)["input_ids"]
            assert fast(spec.fast_text(line))["input_ids"] == want, line
    assert spec.fast_text("東京[MASK]に住む") == "東京 [MASK] に 住む"


@pytest.mark.slow
def test_the_continued_pretraining_export_of_a_bert_for_masked_lm_has_tokenizer_json(tmp_path):
    """--init_from an English BertForMaskedLM whose folder has vocab.txt only: the export too
    carries BertTokenizerFast's tokenizer.json, and AutoTokenizer gives the vocab's ids."""
    transformers = pytest.importorskip("transformers")
    src = tokenizer(tmp_path, "wordpiece")
    plain = tmp_path / "english"
    plain.mkdir()
    spec = load_tokenizer(src)
    (plain / "vocab.txt").write_text("\n".join(spec.tokens) + "\n", encoding="utf-8")
    export(run_dir(tmp_path / "run", plain, "bert", export_class="BertForMaskedLM"), tmp_path / "hf")
    assert (tmp_path / "hf" / "tokenizer.json").is_file()
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["architectures"] == ["BertForMaskedLM"]
    auto = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "hf"))
    assert auto.is_fast and auto(TEXT, add_special_tokens=False)["input_ids"] == spec.word_ids([TEXT])[0]


def test_every_exported_file_follows_the_umask(tmp_path):
    """model.safetensors was 0600 (safetensors' temporary file) while the rest followed the umask."""
    from common.atomic import _UMASK

    tok = tmp_path / "tok"
    tok.mkdir()
    write_vocab(tok, lower_case=False)
    export(run_dir(tmp_path / "run", tok, "modernbert"), tmp_path / "hf")
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "hf").iterdir()}
    assert "model.safetensors" in modes
    assert set(modes.values()) == {0o666 & ~_UMASK}, modes
