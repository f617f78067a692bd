"""The `vocab` stage end to end: layout, alphabet, determinism, resume, options, errors."""
import json
import logging
import subprocess
import sys

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.core.errors import StageError
from pipeline.stages.vocab import build_vocab
from vocab.core.bert_tokenizer import make_tokenizer
from vocab.core.layout import bert_specials
from vocab.core.normalizer import CharNormalizer, alphabet_of
from vocab.kinds import load_vocab


def _tokens(folder):
    return (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()


def test_layout_specials_and_full_alphabet(hu_vocab, hu_sentences):
    tokens = _tokens(hu_vocab)
    assert len(tokens) == 600 and len(set(tokens)) == 600
    assert tokens[:104] == bert_specials()
    for c in alphabet_of(hu_sentences, CharNormalizer()):
        assert c in tokens and "##" + c in tokens, c
    for name in ("spm.model", "spm.vocab", "tokenizer_config.json", "vocab_report.json", "manifest.json"):
        assert (hu_vocab / name).is_file()
    assert not (hu_vocab / ".stage").exists()
    cfg = json.loads((hu_vocab / "tokenizer_config.json").read_text())
    assert cfg["do_lower_case"] is False and cfg["strip_accents"] is False


def test_report_figures(hu_vocab):
    rep = json.loads((hu_vocab / "vocab_report.json").read_text(encoding="utf-8"))
    assert rep["sentences"] > 20 and rep["words"] > rep["sentences"]
    assert rep["unk_token_share"] == 0 and rep["unk_word_share"] == 0
    assert 1 <= rep["subwords_per_word"] < 3 and 0 < rep["whole_word_share"] <= 1
    assert rep["vocab_size"] == 600 and "held out" in rep["eval_source"]
    assert rep["input"]["sample_sentences"] + rep["input"]["heldout_sentences"] == rep["input"]["sentences"]


def test_word_starting_with_a_rare_letter_is_not_unk(hu_vocab, corpus):
    spec = load_vocab(hu_vocab)
    enc = make_tokenizer(spec).encode(f"{corpus.RARE_WORD} Ʃárga", add_special_tokens=False)
    assert "[UNK]" not in enc.tokens
    assert enc.tokens[0] == "Ʃ"


def test_same_bytes_for_one_and_two_workers_and_a_rerun(hu_data, hu_vocab, tmp_path):
    build_vocab(data_dir=hu_data, lang="hu", workers=2, vocab_size=600, output=tmp_path / "v2")
    assert _tokens(tmp_path / "v2") == _tokens(hu_vocab)
    assert (tmp_path / "v2" / "vocab.txt").read_bytes() == (hu_vocab / "vocab.txt").read_bytes()
    reports = [json.loads((d / "vocab_report.json").read_text()) for d in (tmp_path / "v2", hu_vocab)]
    for rep in reports:
        rep.pop("train_seconds"), rep.pop("scan_seconds")
    assert reports[0] == reports[1]


def test_rerun_rewrites_nothing_and_changed_options_need_force(hu_data, tmp_path, caplog):
    out = tmp_path / "v"
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=400, output=out)
    stamp = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    with caplog.at_level(logging.INFO, logger="pipeline"):
        build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=400, output=out)
    assert "already done" in caplog.text
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamp
    with pytest.raises(StageError, match="vocab_size: 400 -> 500.*--force"):
        build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=500, output=out)
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=500, output=out, force=True)
    assert len(_tokens(out)) == 500


def test_interrupted_run_resumes_after_the_finished_tasks(hu_data, tmp_path, monkeypatch):
    import pipeline.stages.vocab as vs
    import vocab.kinds.wordpiece as wordpiece

    def boom(*a, **kw):
        raise KeyboardInterrupt

    out = tmp_path / "v"
    monkeypatch.setattr(wordpiece, "train_sentencepiece", boom)
    with pytest.raises(KeyboardInterrupt):
        build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=400, output=out)
    assert not (out / "manifest.json").exists() and not (out / "vocab.txt").exists()
    monkeypatch.undo()
    monkeypatch.setattr(vs, "_scan", boom)  # the full pass is done: it must not run again
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=400, output=out)
    assert len(_tokens(out)) == 400 and (out / "manifest.json").exists()


def test_lower_case_keeps_accents_unless_strip_accents(hu_data, tmp_path):
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=500, output=tmp_path / "lc",
                lower_case=True)
    lc = set(_tokens(tmp_path / "lc"))
    assert {"ő", "##ű", "á"} <= lc and not {"Á", "##Ő", "Ű"} & lc
    assert load_vocab(tmp_path / "lc").lower_case and not load_vocab(tmp_path / "lc").strip_accents
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=500, output=tmp_path / "sa",
                lower_case=True, strip_accents=True)
    sa = set(_tokens(tmp_path / "sa"))
    assert not set("áéíóöőúüűÁ") & {t.lstrip("#") for t in sa}
    spec = load_vocab(tmp_path / "sa")
    assert spec.lower_case and spec.strip_accents


def test_unigram_and_from_spm(hu_data, hu_vocab, tmp_path):
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=500, output=tmp_path / "u",
                model_type="unigram")
    assert len(_tokens(tmp_path / "u")) == 500
    # converting the trained model again gives the same vocab.txt
    build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=600, output=tmp_path / "c",
                from_spm=hu_vocab / "spm.model")
    assert _tokens(tmp_path / "c") == _tokens(hu_vocab)


def test_tiny_corpus_gives_a_smaller_vocab_and_a_warning(tmp_path, caplog):
    (tmp_path / "tiny.txt").write_text("Árvíztűrő tükörfúrógép.\nŐ ült a kőn.\n", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="pipeline"):
        s = build_vocab(data_dir=tmp_path, lang="hu", workers=1, input=tmp_path / "tiny.txt",
                        output=tmp_path / "v", vocab_size=32000)
    assert 104 < s["vocab_size"] < 32000
    assert "fewer than --vocab-size" in caplog.text


def test_eval_text_and_test_shards_are_used_and_kept_out_of_training(tmp_path, corpus):
    data = tmp_path / "data"
    corpus.write_corpus(data / "hu" / "filtered", corpus.make_sentences(800, seed=1))
    shards = data / "hu" / "sharded"
    shards.mkdir(parents=True)
    (shards / "huwiki_test_0.txt").write_text("Ödön és Éva.\n\nÚj sor itt.\n", encoding="utf-8")
    (shards / "manifest.json").write_text("{}", encoding="utf-8")
    build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=400)
    rep = json.loads((data / "hu" / "vocab" / "vocab_report.json").read_text(encoding="utf-8"))
    assert rep["sentences"] == 2 and "test shards" in rep["eval_source"]
    assert rep["input"]["heldout_sentences"] == 0
    (tmp_path / "ev.txt").write_text("Kutya és macska.\n", encoding="utf-8")
    build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=400, output=tmp_path / "e",
                eval_path=tmp_path / "ev.txt")
    rep = json.loads((tmp_path / "e" / "vocab_report.json").read_text(encoding="utf-8"))
    assert rep["sentences"] == 1 and rep["words"] == 4 and "--eval" in rep["eval_source"]


def test_missing_or_bad_input_is_one_clear_line(tmp_path):
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--lang", "hu", "vocab"])
    assert r.exit_code == 1 and "run `pipeline filter` first, or pass --input" in r.output
    assert "Traceback" not in r.output
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe caf\xe9\n")
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--workers", "1", "vocab",
                                 "--input", str(tmp_path / "bad.txt"), "--output", str(tmp_path / "o")])
    assert r.exit_code == 1 and "not UTF-8" in r.output and not (tmp_path / "o" / "vocab.txt").exists()
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--workers", "1", "vocab",
                                 "--input", str(tmp_path / "empty.txt"), "--output", str(tmp_path / "o2")])
    assert r.exit_code == 1 and "no sentences to train on" in r.output
    r = CliRunner().invoke(cli, ["vocab", "--vocab-size", "50"])
    assert r.exit_code == 2 and "--vocab-size" in r.output


def test_cli_runs_the_stage(hu_data, tmp_path):
    r = CliRunner().invoke(cli, ["--data-dir", str(hu_data), "--lang", "hu", "--workers", "1", "vocab",
                                 "--vocab-size", "300", "--output", str(tmp_path / "v")])
    assert r.exit_code == 0, r.output
    assert len(_tokens(tmp_path / "v")) == 300


def test_stage_module_imports_neither_torch_nor_transformers():
    code = ("import sys, pipeline.stages.vocab, pipeline.cli; "
            "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_test_shards_written_after_the_vocab_do_not_block_a_rerun(tmp_path, corpus, caplog):
    # `pipeline run` does vocab before shard: its next run must still skip the vocab stage.
    data = tmp_path / "data"
    corpus.write_corpus(data / "hu" / "filtered", corpus.make_sentences(300, seed=2))
    build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=300)
    shards = data / "hu" / "sharded"
    shards.mkdir(parents=True)
    (shards / "huwiki_test_0.txt").write_text("Ödön és Éva.\n", encoding="utf-8")
    (shards / "manifest.json").write_text("{}", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="pipeline"):
        build_vocab(data_dir=data, lang="hu", workers=1, vocab_size=300)
    assert "already done" in caplog.text


def test_seeded_sample_is_the_same_for_any_worker_count(hu_data, tmp_path):
    runs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        s = build_vocab(data_dir=hu_data, lang="hu", workers=workers, vocab_size=400, output=out,
                        input_sentence_size=500, seed=3)
        assert s["sample_sentences"] == 500
        runs[workers] = (out / "vocab.txt").read_bytes()
    assert runs[1] == runs[2]
    other = build_vocab(data_dir=hu_data, lang="hu", workers=1, vocab_size=400,
                        output=tmp_path / "s4", input_sentence_size=500, seed=4)
    assert other["sample_sentences"] == 500
    assert (tmp_path / "s4" / "vocab.txt").read_bytes() != runs[1]


def test_input_that_is_all_held_out_text_gets_a_clear_line(tmp_path):
    from pipeline.core.errors import StageError
    from pipeline.stages.vocab import build_vocab

    text = tmp_path / "corpus.txt"
    text.write_text("Első mondat itt.\nMásodik mondat ott.\n", encoding="utf-8")
    with pytest.raises(StageError, match="also occur in the held-out text"):
        build_vocab(data_dir=tmp_path, lang="hu", workers=1, input=text, output=tmp_path / "v",
                    vocab_size=300, eval_path=text)
