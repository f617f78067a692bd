"""`pipeline joint-vocab`: one vocab for several languages (Latin and Cyrillic here), its layout,
the comparison with each language's own vocab, the same bytes for any --workers, bad input."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.joint_vocab import build_joint_vocab
from pipeline.stages.vocab import build_vocab
from tests.helpers.vocab_corpus import UK_WORDS, make_sentences, make_sentences_from, write_corpus
from vocab.core.bert_tokenizer import make_tokenizer
from vocab.core.layout import bert_specials
from vocab.core.normalizer import CharNormalizer, alphabet_of
from vocab.kinds import load_vocab


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("Error:")]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """DATA_DIR with hu/filtered (2,000 sentences) and uk/filtered (400), each with its own vocab
    of 500 entries (what `pipeline run` trains beside the joint vocab)."""
    root = tmp_path_factory.mktemp("data")
    write_corpus(root / "hu" / "filtered", make_sentences(2000, seed=3))
    write_corpus(root / "uk" / "filtered", make_sentences_from(UK_WORDS, 400, seed=4))
    for lang in ("hu", "uk"):
        build_vocab(data_dir=root, lang=lang, workers=1, vocab_size=500)
    return root


@pytest.fixture(scope="module")
def joint(data):
    build_joint_vocab(data_dir=data, langs=("uk", "hu"), workers=1, vocab_size=700, sampling_alpha=0.3)
    return data / "multi" / "hu+uk" / "vocab"


def test_layout_specials_and_every_languages_alphabet(data, joint):
    tokens = (joint / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(tokens) == 700 and tokens[:104] == bert_specials()
    for lang in ("hu", "uk"):
        text = [s for p in sorted((data / lang / "filtered").glob("*.txt"))
                for s in p.read_text(encoding="utf-8").splitlines() if s]
        for c in alphabet_of(text, CharNormalizer()):
            assert c in tokens and "##" + c in tokens, (lang, c)
        enc = make_tokenizer(load_vocab(joint)).encode(" ".join(text[:50]), add_special_tokens=False)
        assert "[UNK]" not in enc.tokens
    for name in ("spm.model", "tokenizer_config.json", "joint_report.json", "manifest.json"):
        assert (joint / name).is_file(), name
    m = json.loads((joint / "manifest.json").read_text())
    assert m["stage"] == "joint-vocab"
    assert m["options"]["languages"] == ["hu", "uk"] and m["options"]["sampling_alpha"] == 0.3


def test_report_gives_each_language_its_shares_and_the_price_of_sharing(joint):
    rep = json.loads((joint / "joint_report.json").read_text(encoding="utf-8"))
    hu, uk = rep["languages"]["hu"], rep["languages"]["uk"]
    assert hu["sentences"] == 2000 and uk["sentences"] == 400
    assert hu["text_share"] == pytest.approx(2000 / 2400)
    z = (2000 / 2400) ** 0.3 + (400 / 2400) ** 0.3
    assert hu["sample_share"] == pytest.approx((2000 / 2400) ** 0.3 / z)
    assert uk["sample_share"] > uk["text_share"]          # the small language gains
    for f in (hu, uk):
        for side in ("joint", "own"):
            assert 1 <= f[side]["subwords_per_word"] < 4 and f[side]["unk_word_share"] == 0
            assert 0 < f[side]["whole_word_share"] <= 1
        assert f["own"]["vocab_size"] == 500 and f["joint"]["vocab_size"] == 700
        assert f["own"]["folder"].endswith("vocab")


def test_same_bytes_for_any_workers_and_any_order_of_the_languages(data, joint, tmp_path):
    build_joint_vocab(data_dir=data, langs=("hu", "uk"), workers=2, vocab_size=700, output=tmp_path / "v2")
    for name in ("vocab.txt", "spm.model", "tokenizer_config.json"):
        assert (tmp_path / "v2" / name).read_bytes() == (joint / name).read_bytes(), name
    reports = [json.loads((d / "joint_report.json").read_text()) for d in (tmp_path / "v2", joint)]
    for rep in reports:
        rep.pop("scan_seconds")
    assert reports[0] == reports[1]
    again = CliRunner().invoke(cli, ["--data-dir", str(data), "--lang", "uk,hu", "joint-vocab",
                                     "--vocab-size", "700"])
    assert again.exit_code == 0 and "already done" in again.output


def test_alpha_moves_the_sample(data, tmp_path):
    shares = {}
    for alpha in (1.0, 0.0):
        build_joint_vocab(data_dir=data, langs=("hu", "uk"), workers=1, vocab_size=700,
                          sampling_alpha=alpha, output=tmp_path / str(alpha))
        rep = json.loads((tmp_path / str(alpha) / "joint_report.json").read_text())
        shares[alpha] = {k: f["sample_share"] for k, f in rep["languages"].items()}
    assert shares[1.0]["hu"] == pytest.approx(2000 / 2400)
    assert shares[0.0] == pytest.approx({"hu": 0.5, "uk": 0.5})


def test_bytelevel_bpe(data, tmp_path):
    build_joint_vocab(data_dir=data, langs=("hu", "uk"), workers=1, vocab_size=600,
                      model_type="bytelevel-bpe", output=tmp_path / "bpe")
    assert (tmp_path / "bpe" / "tokenizer.json").is_file() and not (tmp_path / "bpe" / "vocab.txt").exists()
    rep = json.loads((tmp_path / "bpe" / "joint_report.json").read_text())
    assert set(rep["languages"]) == {"hu", "uk"}


def test_bad_input_is_one_error_line(data, tmp_path):
    def run(*args):
        return CliRunner().invoke(cli, ["--data-dir", str(data), *args])

    res = run("--lang", "hu", "joint-vocab")
    assert res.exit_code == 1 and len(error_lines(res.output)) == 1
    assert "several languages" in res.output and "pipeline vocab" in res.output
    res = run("--lang", "hu,el", "joint-vocab", "--output", str(tmp_path / "x"))
    assert res.exit_code == 1 and error_lines(res.output) == [error_lines(res.output)[0]]
    assert error_lines(res.output)[0].startswith("Error: el: ") and "filter" in res.output
    res = run("--lang", "hu,uk", "joint-vocab", "--sampling-alpha", "1.5")
    assert res.exit_code == 2 and "--sampling-alpha" in res.output
    res = run("--lang", "hu,uk", "vocab")     # a stage of one language
    assert res.exit_code == 2 and len(error_lines(res.output)) == 1
    assert "works on one language" in res.output and "joint-vocab" in res.output
    with pytest.raises(StageError, match="several languages"):
        build_joint_vocab(data_dir=data, langs=("hu",))


def test_the_same_bytes_on_a_dask_cluster(data, joint, tmp_path, dask_cluster):
    res = CliRunner().invoke(cli, ["--data-dir", str(data), "--scheduler", dask_cluster.scheduler_address,
                                   "-q", "--lang", "hu,uk", "joint-vocab", "--vocab-size", "700",
                                   "--output", str(tmp_path / "dask")])
    assert res.exit_code == 0, res.output
    for name in ("vocab.txt", "spm.model"):
        assert (tmp_path / "dask" / name).read_bytes() == (joint / name).read_bytes(), name
